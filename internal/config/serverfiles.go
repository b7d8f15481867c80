package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A server started in a sandbox reads and writes the sandbox's files
// only: its datadir, socket, logs and temporary files are set by the
// sandbox. A config (or a --set or --grid setting) can still point it
// elsewhere: init_file=/etc/shadow makes the server read that file (and
// put a line of it in its log), ssl_key a key that is not its own,
// plugin_dir and plugin_load libraries it then runs, general_log_file a
// file it writes, archive_command a command it runs. Those settings are
// refused unless the user lets the server at the file (AllowFiles: qpslab
// run --allow-server-file PATH), and a fleet agent checks them again
// against its own list (a job's settings come from another host).
//
// serverFiles lists, per family, every option that names such a file,
// folder or command, by its key as the family's parser names it (MySQL's
// dashes as underscores, loose- left out; PostgreSQL's in lower case).
// It is the one list: a new option that names a path is a line here.
// Options the sandbox sets on the command line (datadir, socket, pid
// file, error log, tmpdir; PostgreSQL's port and socket folder) win over a
// config and are not listed.
var serverFiles = map[Family]map[string]fileKind{
	MySQL: {
		// Read at start.
		"init_file": filePath, "ssl_ca": filePath, "ssl_capath": filePath, "ssl_cert": filePath, "ssl_key": filePath,
		"ssl_crl": filePath, "ssl_crlpath": filePath, "admin_ssl_ca": filePath, "admin_ssl_capath": filePath,
		"admin_ssl_cert": filePath, "admin_ssl_key": filePath, "admin_ssl_crl": filePath, "admin_ssl_crlpath": filePath,
		"caching_sha2_password_private_key_path": filePath, "caching_sha2_password_public_key_path": filePath,
		"sha256_password_private_key_path": filePath, "sha256_password_public_key_path": filePath,
		"keyring_file_data": filePath, "keyring_encrypted_file_data": filePath,
		"file_key_management_filename": filePath, "file_key_management_filekey": filePath,
		"ft_stopword_file": filePath, "character_sets_dir": filePath, "lc_messages_dir": filePath, "language": filePath,
		"secure_file_priv": filePath, "chroot": filePath, "plugin_dir": filePath, "wsrep_provider": filePath,
		"!include": filePath, "!includedir": filePath,
		// Libraries it loads and runs.
		"plugin_load": fileLibs, "plugin_load_add": fileLibs, "early_plugin_load": fileLibs,
		// Written.
		"general_log_file": filePath, "slow_query_log_file": filePath, "log_slow_query_file": filePath,
		"log_bin": filePath, "log_bin_index": filePath, "relay_log": filePath, "relay_log_index": filePath,
		"relay_log_info_file": filePath, "master_info_file": filePath, "log_tc": filePath,
		"innodb_data_home_dir": filePath, "innodb_log_group_home_dir": filePath, "innodb_undo_directory": filePath,
		"innodb_tmpdir": filePath, "innodb_temp_tablespaces_dir": filePath, "innodb_directories": filePath,
		"innodb_doublewrite_dir": filePath, "innodb_buffer_pool_filename": filePath, "aria_log_dir_path": filePath,
		"rocksdb_datadir": filePath, "rocksdb_wal_dir": filePath, "rocksdb_tmpdir": filePath,
		"server_audit_file_path": filePath, "audit_log_file": filePath, "slave_load_tmpdir": filePath,
		"replica_load_tmpdir": filePath, "wsrep_data_home_dir": filePath,
		// Commands it runs.
		"wsrep_notify_cmd": fileCommand,
	},
	Postgres: {
		"data_directory": filePath, "config_file": filePath, "hba_file": filePath, "ident_file": filePath,
		"external_pid_file": filePath, "ssl_cert_file": filePath, "ssl_key_file": filePath, "ssl_ca_file": filePath,
		"ssl_crl_file": filePath, "ssl_crl_dir": filePath, "ssl_dh_params_file": filePath,
		"krb_server_keyfile": filePath, "log_directory": filePath, "stats_temp_directory": filePath,
		"include": filePath, "include_if_exists": filePath, "include_dir": filePath,
		"shared_preload_libraries": fileLibs, "local_preload_libraries": fileLibs, "session_preload_libraries": fileLibs,
		"archive_library": fileLibs, "dynamic_library_path": fileSearch,
		"archive_command": fileCommand, "restore_command": fileCommand, "archive_cleanup_command": fileCommand,
		"recovery_end_command": fileCommand, "ssl_passphrase_command": fileCommand,
	},
}

// fileKind is how an option's value names files.
type fileKind int

const (
	filePath    fileKind = iota // a file or folder
	fileLibs                    // libraries, "," or ";" between them, each LIB or NAME=LIB: a path when it holds a "/"
	fileSearch                  // folders, ":" between them ($libdir is the server's own)
	fileCommand                 // a shell command the server runs
)

// ServerFile is a setting that points the server outside its sandbox.
type ServerFile struct {
	Setting string // as written: init_file=/etc/shadow
	Path    string // the file, folder or command it names
	Command bool   // Path is a command the server runs
}

// String is the setting, for a message.
func (f ServerFile) String() string { return f.Setting }

// ServerFiles are the settings of c that make its server read, write or
// run something outside its sandbox: an absolute path (or one that starts
// at a home folder, ~), a relative one that climbs out with .., or a
// command. A relative path without .. is the sandbox's: the servers take
// it from their datadir (or the build's own folder, as plugin_dir). A db_bench
// option set starts no server: none.
func ServerFiles(c Config) ([]ServerFile, error) {
	list := serverFiles[c.Family]
	if len(list) == 0 {
		return nil, nil
	}
	f, err := parse(c.Family, c.Content, c.Name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", c.Name, err)
	}
	var out []ServerFile
	for _, l := range f.lines {
		if l.kind == directiveLine || l.kind == settingLine && serverSection(c.Family, l.section) {
			kind, ok := list[l.key]
			if !ok {
				continue
			}
			setting := l.name + "=" + l.value
			if l.kind == directiveLine {
				setting = l.name + " " + l.value
			}
			out = append(out, outsideOf(kind, setting, unquote(c.Family, l.value))...)
		}
	}
	return out, nil
}

// outsideOf are the files or the command value names that lie outside
// the sandbox, as an option of kind names them.
func outsideOf(kind fileKind, setting, value string) []ServerFile {
	var paths []string
	switch kind {
	case fileCommand:
		if strings.TrimSpace(value) != "" {
			return []ServerFile{{Setting: setting, Path: strings.TrimSpace(value), Command: true}}
		}
		return nil
	case filePath:
		paths = []string{value}
	case fileSearch:
		paths = strings.Split(value, ":")
	case fileLibs:
		for _, lib := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ';' }) {
			if _, file, ok := strings.Cut(lib, "="); ok {
				lib = file
			}
			if strings.Contains(lib, "/") {
				paths = append(paths, lib)
			}
		}
	}
	var out []ServerFile
	for _, p := range paths {
		p = strings.TrimPrefix(strings.TrimSpace(p), "FILE:") // file_key_management_filekey=FILE:/path
		if outside(p) {
			out = append(out, ServerFile{Setting: setting, Path: p})
		}
	}
	return out
}

// outside says whether path leaves the sandbox: absolute, from a home
// folder (~, which MySQL expands), or climbing out with "..". $libdir
// (PostgreSQL's own library folder) is the build's.
func outside(path string) bool {
	switch {
	case path == "" || path == "$libdir" || strings.HasPrefix(path, "$libdir/") && filepath.IsLocal(path[len("$libdir/"):]):
		return false
	case filepath.IsAbs(path) || strings.HasPrefix(path, "~"):
		return true
	}
	return !filepath.IsLocal(path)
}

// unquote is value as the server reads it: MySQL's option files drop the
// quotes around a value and read \n \t \r \b \s \" \' \\ (my_default.c);
// PostgreSQL's drop single quotes and read a doubled quote and backslash escapes
// (GUC_scanstr).
func unquote(fam Family, v string) string {
	v = strings.TrimSpace(v)
	if fam == Postgres {
		if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
			return v
		}
		return pgUnescape(v[1 : len(v)-1])
	}
	if len(v) > 1 && v[0] == v[len(v)-1] && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i == len(v)-1 {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch c := v[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 's':
			b.WriteByte(' ')
		case '"', '\'', '\\':
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgUnescape reads a quoted postgresql.conf value's inside as GUC_scanstr
// does: a doubled quote is one, \b \f \n \r \t their characters, \ and up to three
// octal digits a byte, \ and any other character that character.
func pgUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c != '\\' || i+1 == len(s):
			b.WriteByte(c)
		default:
			i++
			switch e := s[i]; {
			case e == 'b':
				b.WriteByte('\b')
			case e == 'f':
				b.WriteByte('\f')
			case e == 'n':
				b.WriteByte('\n')
			case e == 'r':
				b.WriteByte('\r')
			case e == 't':
				b.WriteByte('\t')
			case e >= '0' && e <= '7':
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 8)
				b.WriteByte(byte(n))
				i = j - 1
			default:
				b.WriteByte(e)
			}
		}
	}
	return b.String()
}

// allowed says whether f is let through by allow (--allow-server-file):
// a path that is one of them or under one of them (a folder), a command
// given as it is written.
func allowed(f ServerFile, allow []string) bool {
	if f.Command {
		return slices.Contains(allow, f.Path)
	}
	p := filepath.Clean(f.Path)
	for _, a := range allow {
		a = filepath.Clean(a)
		if p == a || strings.HasPrefix(p, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}

// AllowFlag is the flag that lets a server at a file outside its sandbox.
const AllowFlag = "--allow-server-file"

// CheckServerFiles refuses, in one line, a config whose settings point its
// server at a file, folder or command outside its sandbox that allow
// (AllowFlag's values) does not name.
func CheckServerFiles(c Config, allow []string) error {
	files, err := ServerFiles(c)
	if err != nil {
		return err
	}
	return refuse("config "+c.Name+" sets", files, allow)
}

// CheckServerFiles refuses, in one line, a grid setting (--set, --grid)
// that would point a server of family fam outside its sandbox, as a
// config's would (CheckServerFiles); fam "": of any family that has the
// option (a grid is checked once before the builds that say its family
// are looked up).
func (g Grid) CheckServerFiles(fam Family, allow []string) error {
	fams := Families
	if fam != "" {
		fams = []Family{fam}
	}
	var files []ServerFile
	for _, s := range g {
		for _, fam := range fams {
			kind, ok := serverFiles[fam][settingKey(fam, s.Name)]
			if !ok {
				continue
			}
			for _, v := range s.Values {
				files = append(files, outsideOf(kind, s.Name+"="+v, unquote(fam, pgValueFor(fam, v)))...)
			}
			break
		}
	}
	return refuse("--set/--grid sets", files, allow)
}

// settingKey is the key a grid setting's name has in family fam.
func settingKey(fam Family, name string) string {
	if fam == Postgres {
		return asciiLower(name)
	}
	return mysqlKey(name)
}

// pgValueFor is v as Derived writes it into a config of family fam.
func pgValueFor(fam Family, v string) string {
	if fam == Postgres {
		return pgValue(v)
	}
	return v
}

func refuse(what string, files []ServerFile, allow []string) error {
	var settings, flags []string
	for _, f := range files {
		if !allowed(f, allow) {
			settings = append(settings, shown(f.Setting))
			flags = append(flags, AllowFlag+" "+shellWord(f.Path))
		}
	}
	if len(settings) == 0 {
		return nil
	}
	return serverFileError(fmt.Sprintf("%s %s, outside the sandbox: qpslab lets a server read, write or run no file it did not make "+
		"(its log could show what it read): leave it out, or let the server at it with %s",
		what, strings.Join(settings, ", "), strings.Join(slices.Compact(flags), " ")))
}

// ErrServerFile is what a refusal of CheckServerFiles is (errors.Is).
var ErrServerFile = errors.New("a setting points the server outside its sandbox")

type serverFileError string

func (e serverFileError) Error() string        { return string(e) }
func (e serverFileError) Is(target error) bool { return target == ErrServerFile }

// shown is s for a one-line message: as it is when it is plain, else
// quoted (a control character, a space).
func shown(s string) string {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '"' || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// shellWord is s as a shell reads it back as one word.
func shellWord(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:=@%", r)) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(oneLineQuoted(s), "'", `'\''`) + "'"
}

// oneLineQuoted keeps a value a shell reads back on one line: a line end
// or another control character is shown as Go escapes it.
func oneLineQuoted(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
