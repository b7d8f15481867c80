package app

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A fleet job's settings come from another host: an agent checks them
// again, against its own --allow-server-file, whatever the job allowed.
// A job that points a server at a file outside its sandbox fails at once
// (permanently), in one line that names the agent, the setting and the
// agent's flag: a --set setting before a build is fetched, a config's
// once the configs are resolved, before a server starts or a grid point
// is derived. One both the job and the agent allow is planned.
func TestAgentRefusesServerFiles(t *testing.T) {
	h := testenv.Home(t)
	var out, errw bytes.Buffer
	e := Env{Home: h, Out: &out, Err: &errw}
	job := fleet.Job{Suite: "sysbench", Params: map[string]string{
		"build": "mariadb-system", "set": "init_file=/etc/shadow", "allow-server-file": "/etc/shadow"}}
	err := jobAgent{e: e, name: "alpha"}.runJob(context.Background(), fleet.Attempt{ID: 7, Attempt: 1, Job: job})
	testenv.WantErr(t, err, "agent alpha refuses the job", "init_file=/etc/shadow", "qpslab agent --allow-server-file")
	if !errors.Is(err, config.ErrServerFile) {
		t.Errorf("%v is not the refusal", err)
	}
	if ents, _ := (config.Store{Dir: h.Configs()}).List(); len(ents) > 0 {
		for _, c := range ents {
			if c.Source != "shipped" {
				t.Errorf("the refused job derived config %s", c.Name)
			}
		}
	}
	// A config of the agent's home: refused when the configs are resolved.
	if _, err := (config.Store{Dir: h.Configs()}).AddContent("keyed", []byte("# qpslab: base=default\nssl-key=/root/k.pem\n"), config.MySQL, false); err != nil {
		t.Fatal(err)
	}
	keyed := fleet.Job{Suite: "sysbench", Params: map[string]string{"build": "mariadb-system", "config": "keyed"}}
	err = jobAgent{e: e, name: "alpha"}.runJob(context.Background(), fleet.Attempt{ID: 8, Attempt: 1, Job: keyed})
	testenv.WantErr(t, err, "agent alpha refuses the job", "config keyed sets ssl-key=/root/k.pem")
	// Both allow it: the job is planned.
	p, err := jobPlan(job, []string{"/etc/shadow"})
	if err == nil {
		err = p.Resolve(context.Background(), h)
	}
	if err != nil {
		t.Errorf("allowed by the job and the agent: %v", err)
	}
	// The agent alone does not allow what the job did not.
	delete(job.Params, "allow-server-file")
	_, err = jobPlan(job, []string{"/etc/shadow"})
	testenv.WantErr(t, err, "init_file=/etc/shadow", "--allow-server-file /etc/shadow")
}

// A bisection job's --allow-server-file (one of its suite flags) is
// narrowed to what the agent allows too: what the agent does not allow is
// refused when its plans are resolved, as a plan job's.
func TestBisectJobAllowNarrowed(t *testing.T) {
	set := map[string]string{"allow-server-file": "/etc/ssl,/root/k.pem", "tests": "point-query*"}
	got := narrowAllow(set, []string{"/etc/ssl/"})
	if got["allow-server-file"] != "/etc/ssl" || got["tests"] != "point-query*" || set["allow-server-file"] != "/etc/ssl,/root/k.pem" {
		t.Errorf("narrowed to %v (the job's %v)", got, set)
	}
	if got := narrowAllow(set, nil); got["allow-server-file"] != "" || len(got) != 1 {
		t.Errorf("an agent that allows nothing: %v", got)
	}
	if got := narrowAllow(map[string]string{"tests": "x"}, []string{"/etc"}); len(got) != 1 {
		t.Errorf("a job that allows nothing: %v", got)
	}
}
