package target

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/owned"
)

// Report is what Check found.
type Report struct {
	Target Target
	// Version is the server's version number (11.4.5), Full what it
	// reports (11.4.5-MariaDB-log), Flavor the flavor that tells.
	Version, Full string
	Flavor        build.Flavor
	// Created: qpslab created its database now; Claimed: it marked an
	// empty one as its own now.
	Created, Claimed bool
	MaxConnections   int64
	// Counters is empty where the flavor's server counters can be read,
	// else why not (runs then lack them, and say so).
	Counters string
	// Missing are the privileges the user lacks that a run would use, each
	// with what the run then does without.
	Missing []string
	// PID is the server's process where it runs on this host (Local), 0
	// elsewhere; Dir the folder it runs in.
	PID int
	Dir string
	// Endpoint is where runs connect: the target's, in its database, with
	// its password.
	Endpoint client.Endpoint
}

// Label is the build name of the target's runs: NAME-VERSION.
func (r Report) Label() string { return r.Target.Name + "-" + r.Version }

var versionRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)+`)

// Check connects to t as its user and checks it is the server it was
// registered as: reachable, of its flavor, with qpslab's database there and
// qpslab's own (created, or claimed while empty), writable by the user.
// Every failure is one line naming the target and what to do.
func Check(ctx context.Context, t Target) (Report, error) {
	r := Report{Target: t}
	ep, err := t.Endpoint()
	if err != nil {
		return r, err
	}
	r.Endpoint = ep
	opts := client.Options{TCP: t.Socket == "", Driver: true}
	d := t.dialect()
	login := ep
	if d.Use(t.Database) != "" {
		login.Database = "" // the database may not exist yet: it is used once it does
	}
	conn, err := client.Dial(ctx, login, opts)
	if d.AdminDatabase != "" && noDatabase(err) {
		conn, err = client.Dial(ctx, ep.WithDatabase(d.AdminDatabase), opts)
		if err == nil {
			r.Created = true
		}
	}
	if err != nil {
		return r, connectErr(t, err)
	}
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	if err := r.identify(ctx, conn); err != nil {
		return r, err
	}
	switch use := d.Use(t.Database); {
	case use != "":
		n, err := client.Scalar(ctx, conn, d.DatabaseExists(t.Database))
		if err != nil {
			return r, fmt.Errorf("target %s: look up database %s: %v", t.Name, t.Database, oneLine(err))
		}
		if n == 0 {
			_, err := conn.Exec(ctx, d.CreateDatabase(t.Database))
			switch {
			case existsAlready(err):
				// Created since it was looked up (another part of a spread
				// run checking the target at once): whose tables it holds
				// is Claim's to judge.
			case err != nil:
				return r, createErr(t, err)
			default:
				r.Created = true
			}
		}
		if _, err := conn.Exec(ctx, use); err != nil {
			return r, fmt.Errorf("target %s: use database %s (the user needs privileges on it): %v", t.Name, t.Database, oneLine(err))
		}
	case r.Created:
		if _, err := conn.Exec(ctx, d.CreateDatabase(t.Database)); err != nil {
			r.Created = false
			if !existsAlready(err) { // else created since the log-in (another part of a spread run)
				return r, createErr(t, err)
			}
		}
		conn.Close()
		if conn, err = client.Dial(ctx, r.Endpoint, opts); err != nil {
			conn = nil
			return r, connectErr(t, err)
		}
	}
	if d.CanCreateTables != "" {
		n, err := client.Scalar(ctx, conn, d.CanCreateTables)
		if err != nil {
			return r, fmt.Errorf("target %s: look up the user's privileges: %v", t.Name, oneLine(err))
		}
		if n == 0 {
			// Only PostgreSQL's privileges are the schema's.
			return r, fmt.Errorf("target %s: user %s may not create tables in database %s (its current schema): GRANT CREATE ON SCHEMA public TO %s there, or name with --database one the user owns", t.Name, t.User, t.Database, t.User)
		}
	}
	if r.Claimed, err = owned.Claim(ctx, d, conn, t.Database); err != nil {
		return r, fmt.Errorf("target %s: %v", t.Name, oneLine(err))
	}
	if r.MaxConnections, err = client.Scalar(ctx, conn, d.MaxConnections); err != nil {
		return r, fmt.Errorf("target %s: read max_connections: %v", t.Name, oneLine(err))
	}
	if d.StorageEngines {
		// The quiet wait reads InnoDB's history list length (settle.Quiet).
		if _, err := client.Text(ctx, conn, "SHOW ENGINE INNODB STATUS"); client.Denied(err) {
			r.Missing = append(r.Missing, "PROCESS: the quiet wait before a read test cannot see InnoDB's purge (its history list length), and waits on the dirty pages alone")
		}
	}
	r.PID, r.Dir = Local(t)
	cr, err := counters.Open(ctx, t.Flavor.Describe().Counters, r.Endpoint, opts.TCP, counters.Selection{})
	if err != nil {
		r.Counters = oneLine(err).Error()
	} else {
		cr.Release()
	}
	return r, nil
}

// identify reads the server's version and checks its flavor.
func (r *Report) identify(ctx context.Context, conn client.Conn) error {
	t := r.Target
	rows, err := client.Text(ctx, conn, "SELECT VERSION()")
	if err == nil && (len(rows) != 1 || len(rows[0]) != 1) {
		err = fmt.Errorf("%d rows", len(rows))
	}
	if err != nil {
		return fmt.Errorf("target %s: read the server's version: %v", t.Name, oneLine(err))
	}
	r.Full = rows[0][0]
	r.Version = versionRE.FindString(r.Full)
	r.Flavor = build.OfServer(string(t.protocol()), r.Full)
	if r.Version == "" {
		return fmt.Errorf("target %s reports version %s, which names no version number: is it a %s server?", t.Name, quote(r.Full), t.Flavor.Describe().Title)
	}
	if r.Flavor != t.Flavor {
		return fmt.Errorf("target %s is registered as %s and the server is %s %s: register it again with --flavor %s --replace", t.Name, t.Flavor.Describe().Title, r.Flavor.Describe().Title, r.Version, r.Flavor)
	}
	return nil
}

// existsAlready is a CREATE DATABASE refused because the database is there
// (MySQL 1007, PostgreSQL 42P04, or 23505 on pg_database's name index when
// another session created it at the same moment).
func existsAlready(err error) bool {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	return errors.As(err, &me) && me.Number == 1007 ||
		errors.As(err, &pe) && (pe.Code == "42P04" || pe.Code == "23505" && pe.ConstraintName == "pg_database_datname_index")
}

func noDatabase(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "3D000"
}

// connectErr is a failed log-in, told as what the user can fix.
func connectErr(t Target, err error) error {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	hint := "check that the server runs there and that this host may reach it"
	switch {
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1698):
		hint = "check the user and the password" + t.passwordSource()
	case errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000"):
		hint = "check the user and the password" + t.passwordSource() + ", and pg_hba.conf"
	case errors.As(err, &me) && me.Number == 1044:
		hint = "grant the user privileges on database " + t.Database
	}
	return fmt.Errorf("target %s (%s as %s): cannot log in: %v: %s", t.Name, t.Where(), t.User, oneLine(err), hint)
}

func (t Target) passwordSource() string {
	switch {
	case t.PasswordEnv != "":
		return " ($" + t.PasswordEnv + ")"
	case t.PasswordFile != "":
		return " (" + t.PasswordFile + ")"
	}
	return " (the target has none: register it with --password-env or --password-file)"
}

func createErr(t Target, err error) error {
	return fmt.Errorf("target %s: user %s may not create database %s (%v): create it for the user, or name with --database one the user owns that holds no tables", t.Name, t.User, t.Database, oneLine(err))
}

// oneLine is err on one line: servers' messages may hold line breaks.
func oneLine(err error) error {
	if err == nil {
		return errors.New("no answer")
	}
	s := err.Error()
	if !strings.ContainsAny(s, "\r\n") {
		return err
	}
	return errors.New(strings.Join(strings.Fields(s), " "))
}
