package lang_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/testenv"
	"github.com/qpslab/qpslab/internal/workload/script/lang"
)

// texts is an Executor that keeps the statements' arguments as pgbench
// would substitute them.
type texts struct{ args [][]string }

func (x *texts) Exec(_ context.Context, _ lang.Statement, args []lang.Value) ([]string, []lang.Value, error) {
	var a []string
	for _, v := range args {
		a = append(a, lang.Format(v))
	}
	x.args = append(x.args, a)
	return nil, nil, nil
}
func (x *texts) Sleep(context.Context, time.Duration) error { return nil }

// Debian's pgbench is the reference: the same script run by it (-d prints
// each statement it sends, with the variables substituted) and by Run
// gives the same values, for every deterministic operator and function.
func TestAgainstPgbench(t *testing.T) {
	pgbench := ""
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench"); len(m) > 0 {
		pgbench = m[len(m)-1]
	}
	if pgbench == "" {
		testenv.Skip(t, "no Debian pgbench (/usr/lib/postgresql/*/bin/pgbench): the language is not checked against it")
	}
	exprs := []string{
		"abs(-17)", "abs(-17.5)", "double(5432)", "exp(1.0)", "greatest(5, 4, 3, 2)", "greatest(1, 2.0)",
		"int(5.4 + 3.8)", "int(2.5)", "int(3.5)", "int(-2.7)", "least(5, 4, 3, 2.1)", "ln(2.718281828459045)",
		"mod(54, 32)", "mod(-54, 32)", "pi()", "pow(2.0, 10)", "power(1.5, 3)", "sqrt(2.0)",
		"5 % 3", "-7 / 2", "-7 % 2", "5.5 % 2", "5.0 / 2", "2 + 3 * 4", "5 & 3", "5 | 3", "5 # 3", "~5",
		"1 << 2", "-8 >> 1", "1 << 64", "7 % -1", "1.0 / 3", "1e20 * 3", "1e-7", "100.0", "1.0 / 0", "ln(0)", "sqrt(-1)",
		"9223372036854775807 * 1.0", "-9223372036854775808", "abs(-9223372036854775808)",
		"5 < 3", "5 <= 5", "5 != 5", "1.0 = 1", "true AND false", "NOT true", "NULL OR true", "false AND NULL",
		"true OR NULL", "false OR NULL", "NULL = 1", "1 + NULL", "abs(NULL)", "1 IS NULL", "NULL ISNULL", "2 NOTNULL",
		"CASE WHEN 1 = 2 THEN 5 WHEN 2 = 2 THEN 6 ELSE 7 END", "CASE WHEN false THEN 5 END", "CASE WHEN NULL THEN 1 ELSE 2 END",
		"hash_fnv1a(42, 5432)", "hash_murmur2(42, 5432)", "hash(42, 5432)", "hash_fnv1a(-1, 0)", "hash_murmur2(0, 0)",
		"hash_fnv1a(9223372036854775807, -5)", "hash_murmur2(-9223372036854775808, 1234567)", "random(1.6, 1.6)",
		":scale * 2", ":client_id", ":random_seed",
	}
	var script strings.Builder
	var sel []string
	for i, e := range exprs {
		script.WriteString("\\set v" + strconv.Itoa(i) + " " + e + "\n")
		sel = append(sel, ":v"+strconv.Itoa(i))
	}
	script.WriteString("SELECT " + strings.Join(sel, " , ") + ";\n")

	sc, err := lang.Parse("check.sql", script.String())
	if err != nil {
		t.Fatal(err)
	}
	ours := &texts{}
	if err := sc.Run(context.Background(), lang.NewState(7, 0, map[string]lang.Value{"scale": int64(3)}), ours); err != nil {
		t.Fatal(err)
	}

	srv, _ := testenv.StartServer(t, "postgres-system")
	ep := srv.Endpoint()
	file := filepath.Join(t.TempDir(), "check.sql")
	if err := os.WriteFile(file, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	port := ep.Port
	if i := strings.LastIndex(ep.Socket, "."); ep.Socket != "" && i >= 0 {
		if p, err := strconv.Atoi(ep.Socket[i+1:]); err == nil {
			port = p
		}
	}
	host := ep.Host
	if ep.Socket != "" {
		host = filepath.Dir(ep.Socket)
	}
	db := ep.Database
	if db == "" {
		db = "postgres"
	}
	cmd := exec.Command(pgbench, "-h", host, "-p", strconv.Itoa(port), "-U", ep.User, "-n", "-t", "1", "-d",
		"--random-seed=7", "-D", "scale=3", "-f", file, db)
	// The statement itself may fail (Infinity is no SQL value): what
	// pgbench sent is what is compared.
	out, err := cmd.CombinedOutput()
	var sent string
	for _, l := range strings.Split(string(out), "\n") {
		if _, s, ok := strings.Cut(l, "client 0 sending SELECT "); ok {
			sent = strings.TrimSuffix(s, ";")
		}
	}
	if sent == "" {
		t.Fatalf("pgbench sent no SELECT (%v):\n%s", err, out)
	}
	theirs := strings.Split(sent, " , ")
	if len(theirs) != len(exprs) || len(ours.args) != 1 {
		t.Fatalf("pgbench sent %d values for %d expressions: %s", len(theirs), len(exprs), sent)
	}
	for i, e := range exprs {
		if ours.args[0][i] != theirs[i] {
			t.Errorf("%s: ours %s, pgbench's %s", e, ours.args[0][i], theirs[i])
		}
	}
}
