package sandbox

// What a sandbox holds is its owner's alone: a server's log can carry a
// line of any file it read, its config and state say where everything is,
// and its datadir holds the tables. So the sandbox folder is 0700 (0710
// with the server account's group, when the server runs as an account of
// its own: it may pass through, not list), every file qpslab writes in it
// 0600, and the folders the server writes in (its datadir, socket folder,
// tmp and files) 0700 and the server account's.
//
// The server account owns those folders, so it could leave a symlink in
// one where qpslab later writes as root; qpslab therefore never follows a
// symlink where it writes or chowns (O_NOFOLLOW, fchown on what it
// opened), and writes the sandbox folder's own files where only qpslab
// can create them.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/qpslab/qpslab/internal/home"
)

// privateFolder makes the sandbox folder dir its owner's alone: 0700, or,
// when the server runs as account as, qpslab's with as's group and mode
// 0710, so that the server reaches its own folders in it and lists
// nothing. A folder an older qpslab gave the server's account whole is
// taken back.
func privateFolder(dir string, as *runAs) error {
	mode, gid := os.FileMode(0o700), -1
	if as != nil {
		mode, gid = 0o710, int(as.GID)
	}
	if err := os.Lchown(dir, os.Geteuid(), gid); err != nil {
		return fmt.Errorf("make %s private: %w", dir, unwrap(err))
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("make %s private: %w", dir, unwrap(err))
	}
	return nil
}

// ensureSandboxes makes the home's sandboxes folder: 0711, so that a
// server account passes through it to its own sandbox and lists none.
func ensureSandboxes(h home.Home) error {
	if err := home.Ensure(h.Root); err != nil {
		return err
	}
	if err := os.Mkdir(h.Sandboxes(), 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", h.Sandboxes(), unwrap(err))
	}
	return nil
}

// keptLogs makes the folder prune --keep-logs moves a sandbox's logs to:
// 0700, in the home's logs folder (made 0700 when it is not there).
func keptLogs(h home.Home, dir string) error {
	if err := home.Ensure(h.Root); err != nil {
		return err
	}
	for _, d := range []string{h.Logs(), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", d, unwrap(err))
		}
	}
	return nil
}

// serverFolder makes path a folder the server writes in, 0700 and the
// server account's (as; nil: qpslab's own), or takes the one there. The
// socket folder of a long sandbox path is one under /tmp, a name anyone
// can take first: a folder there is taken only when it is a folder, not
// a symlink, and qpslab's or the server account's; else the start is
// refused with whose it is. It is never chowned through a symlink.
func serverFolder(path string, as *runAs) error {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, unwrap(err))
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%s is a symlink or a file, not a folder qpslab made: someone else put it there; remove it if nothing uses it, or set QPSLAB_HOME to a shorter path (the socket then stays in the sandbox)", path)
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if int(st.Uid) != os.Geteuid() && (as == nil || st.Uid != as.UID) {
		return fmt.Errorf("%s belongs to %s, not to qpslab's user or its server's: someone else made it; remove it if nothing uses it, or set QPSLAB_HOME to a shorter path (the socket then stays in the sandbox)", path, userName(st.Uid))
	}
	if as != nil {
		if err := unix.Fchown(fd, int(as.UID), int(as.GID)); err != nil {
			return fmt.Errorf("give %s to user %s: %w", path, as.Name, err)
		}
	}
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return fmt.Errorf("make %s private: %w", path, err)
	}
	return nil
}

// userName is uid's name, and its number.
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

// removeRunDir removes a socket folder qpslab made under /tmp, if it is
// still the folder it made: qpslab's or the server account's, not a
// symlink.
func removeRunDir(st State) {
	fi, err := os.Lstat(st.RunDir)
	if err != nil || !fi.IsDir() {
		return
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	uid := sys.Uid
	ours := int(uid) == os.Geteuid()
	if !ours && st.User != "" {
		u, err := user.Lookup(st.User)
		ours = err == nil && u.Uid == strconv.FormatUint(uint64(uid), 10)
	}
	if ours {
		os.RemoveAll(st.RunDir)
	}
}

// createPrivate creates path anew, 0600 (what was there, a file or a
// symlink, is removed first, never followed), for writing; as, when not
// nil, gets it.
func createPrivate(path string, as *runAs) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if as != nil {
		if err := f.Chown(int(as.UID), int(as.GID)); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// writePrivate writes data to path anew, 0600 (createPrivate).
func writePrivate(path string, data []byte, as *runAs) error {
	f, err := createPrivate(path, as)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openLog opens the server's log for appending, 0600 (a log an older
// qpslab left 0644 too), never through a symlink, and gives it to as.
func openLog(path string, as *runAs) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err == nil && as != nil {
		err = f.Chown(int(as.UID), int(as.GID))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
