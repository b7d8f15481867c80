package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

type hostLine struct {
	ID, Href, Names, Machine, Last string
	Risks, Runs                    int
}

func machine(c host.Check) string {
	parts := []string{}
	if c.CPUModel != "" {
		parts = append(parts, c.CPUModel)
	}
	if c.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", c.CPUs))
	}
	if c.MemKB > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(c.MemKB)/(1<<20)))
	}
	if c.Kernel != "" {
		parts = append(parts, "kernel "+c.Kernel)
	}
	if c.VM {
		parts = append(parts, "VM")
	}
	return strings.Join(parts, ", ")
}

func (s *Server) pageHosts(w http.ResponseWriter, r *http.Request) {
	hosts, err := s.st.Hosts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var lines []hostLine
	for _, h := range hosts {
		var c host.Check
		_ = json.Unmarshal(h.Fingerprint, &c) // a fingerprint that does not decode shows no machine
		lines = append(lines, hostLine{ID: h.ID, Href: hostHref(h.ID), Names: strings.Join(h.Hostnames, ", "), Machine: machine(c), Risks: len(c.Risks), Runs: h.Runs, Last: fmtTime(h.Last)})
	}
	s.render(w, r, http.StatusOK, "hosts", page{Title: "hosts", Data: lines})
}

func (s *Server) pageHost(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	hosts, err := s.st.Hosts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(hosts, func(h store.HostInfo) bool { return h.ID == id })
	if i < 0 {
		s.fail(w, r, notFound("no host %s: see /hosts", id))
		return
	}
	h := hosts[i]
	var c host.Check
	noRisks := "No variance risk was found when its runs ran."
	if err := json.Unmarshal(h.Fingerprint, &c); err != nil {
		noRisks = "Its fingerprint does not read as qpslab host check's: " + result.JSONError(h.Fingerprint, err).Error()
	}
	labels := h.Hostnames
	if len(labels) == 0 {
		labels = []string{h.ID}
	}
	var body bytes.Buffer
	if err := report.HTMLSections(&body, report.Model{Hosts: []report.Host{{Labels: labels, Fingerprint: h.Fingerprint}}}); err != nil {
		s.serverError(w, r, err)
		return
	}
	data := struct {
		ID, Names, First, Last, RunsHref, NoRisks string
		Runs                                      int
		Risks                                     []host.Risk
		Report                                    template.HTML
	}{ID: h.ID, Names: strings.Join(h.Hostnames, ", "), First: fmtTime(h.FirstSeen), Last: fmtTime(h.Last), Runs: h.Runs,
		RunsHref: withQuery("/runs", url.Values{"host": {h.ID}}), Risks: c.Risks, NoRisks: noRisks, Report: template.HTML(body.String())}
	s.render(w, r, http.StatusOK, "host", page{Title: "host " + h.ID, Data: data})
}
