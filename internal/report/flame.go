package report

import (
	"fmt"
	"hash/fnv"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
)

// StackSection is one test at one thread count and one stack source: each
// label's stacks, merged over its runs, the base's first.
type StackSection struct {
	Test    string
	Threads int
	Source  string // pmp or perf
	// Conditions are the runs' (result.Run.Conditions): runs under other
	// conditions are never merged; Mixed says the test has sections under
	// other conditions too, so titles name them.
	Conditions string
	Mixed      bool
	Sets       []StackSet
}

// StackSections gathers the stacks of sets' comparable runs: a section per
// test, thread count and source that some label has stacks of, in the
// first set's order.
func StackSections(sets []analysis.Set) []StackSection {
	// Keyed as compare keys labels (result.Run.LabelConditions): an InnoDB
	// run and a MyRocks run of one test are one section, each its label's
	// set, with its engine.
	type key struct {
		test    string
		threads int
		cond    string
		source  string
	}
	var keys []key
	step := map[key]int{}
	per := make([]map[key][]result.Stacks, len(sets))
	engine := make([]map[key]string, len(sets))
	for i, s := range sets {
		per[i] = map[key][]result.Stacks{}
		engine[i] = map[key]string{}
		for _, r := range s.Runs {
			if !r.Comparable() {
				continue
			}
			for _, st := range r.Stacks {
				k := key{r.Test, r.Threads, r.LabelConditions(), st.Source}
				if _, ok := step[k]; !ok {
					keys = append(keys, k)
					step[k] = r.Step
				}
				per[i][k] = append(per[i][k], st)
				engine[i][k] = r.StorageEngine()
			}
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if step[keys[i]] != step[keys[j]] {
			return step[keys[i]] < step[keys[j]]
		}
		if keys[i].threads != keys[j].threads {
			return keys[i].threads < keys[j].threads
		}
		return keys[i].source > keys[j].source // pmp before perf
	})
	conds := map[key]map[string]bool{}
	for _, k := range keys {
		kk := key{k.test, k.threads, "", k.source}
		if conds[kk] == nil {
			conds[kk] = map[string]bool{}
		}
		conds[kk][k.cond] = true
	}
	var out []StackSection
	for _, k := range keys {
		mixed := len(conds[key{k.test, k.threads, "", k.source}]) > 1
		sec := StackSection{Test: k.test, Threads: k.threads, Source: k.source, Conditions: k.cond, Mixed: mixed}
		for i, s := range sets {
			if runs := per[i][k]; len(runs) > 0 {
				set := StackSet{Label: s.Label, Test: k.test, Threads: k.threads, Runs: len(runs), Stacks: stacks.Merge(runs), StorageEngine: engine[i][k]}
				if mixed {
					set.Conditions = k.cond
				}
				sec.Sets = append(sec.Sets, set)
			}
		}
		out = append(out, sec)
	}
	return out
}

// flameNode is a frame of a flame graph: its samples in the drawn set (n)
// and, for a differential one, in the base (base).
type flameNode struct {
	name     string
	n, base  int64
	children map[string]*flameNode
}

func (f *flameNode) child(name string) *flameNode {
	if f.children == nil {
		f.children = map[string]*flameNode{}
	}
	c, ok := f.children[name]
	if !ok {
		c = &flameNode{name: name}
		f.children[name] = c
	}
	return c
}

// sorted are the children by name, as flamegraph.pl orders them.
func (f *flameNode) sorted() []*flameNode {
	out := make([]*flameNode, 0, len(f.children))
	for _, c := range f.children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func flameTree(s result.Stacks, base *result.Stacks) *flameNode {
	root := &flameNode{name: "all"}
	add := func(st result.Stacks, isBase bool) {
		for _, x := range st.Stacks {
			node := root
			bump := func(n *flameNode) {
				if isBase {
					n.base += x.Count
				} else {
					n.n += x.Count
				}
			}
			bump(node)
			for _, f := range strings.Split(x.Frames, ";") {
				node = node.child(f)
				bump(node)
			}
		}
	}
	add(s, false)
	if base != nil {
		add(*base, true)
	}
	return root
}

const (
	flameWidth = 1160.0
	flameRowH  = 16.0
	flamePad   = 10.0
	flameTop   = 28.0
)

// flameColour is a frame's colour: warm, from its name (the same function
// has the same colour in every graph); in a differential graph, red where
// its share of the samples grew against the base, blue where it shrank,
// by how much relative to the largest change.
func flameColour(f *flameNode, diff bool, totalN, totalBase int64, maxDelta float64) string {
	if !diff {
		h := fnv.New32a()
		h.Write([]byte(f.name))
		v := h.Sum32()
		r := 205 + int(v%50)
		g := int((v >> 8) % 180)
		b := int((v >> 16) % 55)
		return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
	}
	delta := float64(f.n)/float64(max(totalN, 1)) - float64(f.base)/float64(max(totalBase, 1))
	x := 0.0
	if maxDelta > 0 {
		x = math.Min(1, math.Abs(delta)/maxDelta)
	}
	c := int(235 - 200*x)
	if delta >= 0 {
		return fmt.Sprintf("rgb(250,%d,%d)", c, c)
	}
	return fmt.Sprintf("rgb(%d,%d,250)", c, c)
}

// svgFlame draws s as a flame graph: the root at the bottom, each frame as
// wide as its share of the samples, its callees above it. With base, a
// differential flame graph: the shape is s, the colours its change
// against base. Frames narrower than a pixel's fraction are left out.
// Every frame carries its name (data-n) for the page's search.
func svgFlame(id, title string, s result.Stacks, base *result.Stacks) template.HTML {
	root := flameTree(s, base)
	if root.n == 0 {
		return ""
	}
	var maxDelta float64
	var depth int
	var walk func(f *flameNode, d int)
	walk = func(f *flameNode, d int) {
		depth = max(depth, d)
		if base != nil {
			delta := math.Abs(float64(f.n)/float64(root.n) - float64(f.base)/float64(max(root.base, 1)))
			maxDelta = math.Max(maxDelta, delta)
		}
		for _, c := range f.children {
			if c.n > 0 {
				walk(c, d+1)
			}
		}
	}
	walk(root, 0)
	height := flameTop + float64(depth+1)*flameRowH + flamePad
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="flame" id="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		svgEsc(id), svgF(flameWidth+2*flamePad), svgF(height), svgF(flameWidth+2*flamePad), svgF(height), svgEsc(title))
	fmt.Fprintf(&sb, `<text class="ctitle" x="%s" y="18">%s</text>`, svgF(flamePad), svgEsc(title))
	scale := flameWidth / float64(root.n)
	var draw func(f *flameNode, x float64, d int)
	draw = func(f *flameNode, x float64, d int) {
		w := float64(f.n) * scale
		if w < 0.3 {
			return
		}
		y := height - flamePad - float64(d+1)*flameRowH
		share := 100 * float64(f.n) / float64(root.n)
		tip := fmt.Sprintf("%s: %d sample(s), %.2f%%", f.name, f.n, share)
		if base != nil {
			tip += fmt.Sprintf(" (base %.2f%%)", 100*float64(f.base)/float64(max(root.base, 1)))
		}
		fmt.Fprintf(&sb, `<g class="ff" data-n="%s"><title>%s</title><rect x="%s" y="%s" width="%s" height="%s" rx="1" fill="%s"/>`,
			svgEsc(f.name), svgEsc(tip), svgF(flamePad+x), svgF(y), strings.TrimSuffix(fmt.Sprintf("%.2f", w), ".00"), svgF(flameRowH-1),
			flameColour(f, base != nil, root.n, root.base, maxDelta))
		if chars := int((w - 4) / 6.2); chars >= 3 {
			label := f.name
			if len(label) > chars {
				label = label[:chars-2] + ".."
			}
			fmt.Fprintf(&sb, `<text x="%s" y="%s">%s</text>`, svgF(flamePad+x+2), svgF(y+flameRowH-5), svgEsc(label))
		}
		sb.WriteString(`</g>`)
		cx := x
		for _, c := range f.sorted() {
			if c.n == 0 {
				continue
			}
			draw(c, cx, d+1)
			cx += float64(c.n) * scale
		}
	}
	draw(root, 0, 0)
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

// htmlStacks is the report's section of stacks: per test, each label's
// flame graph and, against the base, a differential flame graph and the
// table of what grew, shrank, appeared and disappeared. Each graph has a
// search box: frames whose name matches are highlighted and their share of
// the samples shown.
func htmlStacks(secs []StackSection) template.HTML {
	secs = withSamples(secs)
	if len(secs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2 id="stacks">Where the server's threads were</h2>
<p class="note">Flame graphs of the server's thread stacks during each test's measured window (pmp: every thread every --pmp seconds, waiting or running; perf: on-CPU samples), merged over a label's runs. A frame is as wide as its share of the samples; its callees sit on it. Search takes a regular expression. Against the base, a differential flame graph has the other label's shape, red where a frame's share grew and blue where it shrank.</p>
`)
	anchored := map[string]bool{}
	for si, sec := range secs {
		cond := ""
		if sec.Mixed {
			cond = " [" + sec.Conditions + "]"
		}
		id := ""
		if a := stackAnchor(secs, sec.Test, sec.Threads); a != "" && !anchored[a] {
			anchored[a] = true
			id = fmt.Sprintf(` id="%s"`, template.HTMLEscapeString(a))
		}
		fmt.Fprintf(&b, "<h3%s>%s, %d thread(s)%s: %s</h3>\n", id, template.HTMLEscapeString(sec.Test), sec.Threads, template.HTMLEscapeString(cond), sec.Source)
		for li, set := range sec.Sets {
			id := fmt.Sprintf("flame-%d-%d", si, li)
			fmt.Fprintf(&b, "<h4>%s</h4>\n<p class=\"note\">%s</p>\n", template.HTMLEscapeString(set.Label), template.HTMLEscapeString(stackHow(set.Stacks, set.Runs)))
			b.WriteString(flameBox(id, svgFlame(id, set.Label+": "+sec.Test+", "+sec.Source, set.Stacks, nil)))
		}
		if len(sec.Sets) < 2 || sec.Sets[0].Stacks.Samples() == 0 {
			continue
		}
		base := sec.Sets[0]
		for li, other := range sec.Sets[1:] {
			if other.Stacks.Samples() == 0 {
				continue
			}
			id := fmt.Sprintf("flamediff-%d-%d", si, li)
			fmt.Fprintf(&b, "<h4>%s against %s</h4>\n", template.HTMLEscapeString(other.Label), template.HTMLEscapeString(base.Label))
			b.WriteString(flameBox(id, svgFlame(id, other.Label+" against "+base.Label+": "+sec.Test, other.Stacks, &base.Stacks)))
			b.WriteString(htmlStackDiff(stacks.Compare(base.Stacks, other.Stacks, DiffThreshold, 10), base.Label, other.Label))
		}
	}
	b.WriteString(flameScript)
	return template.HTML(b.String())
}

// stackAnchor is the anchor of a test's first stack section, "" when it
// has none.
func stackAnchor(secs []StackSection, test string, threads int) string {
	for _, s := range withSamples(secs) {
		if s.Test == test && s.Threads == threads {
			return fmt.Sprintf("stacks-%s-%d", strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
					return r
				}
				return '_'
			}, test), threads)
		}
	}
	return ""
}

// withSamples are the sections where some label has samples (a load
// shorter than half the --pmp interval has none).
func withSamples(secs []StackSection) []StackSection {
	var out []StackSection
	for _, s := range secs {
		for _, set := range s.Sets {
			if set.Stacks.Samples() > 0 {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// DiffThreshold is the share of the samples below which a stack is noise
// in the report's and the run's diffs (qpslab stacks diff --threshold).
const DiffThreshold = 0.01

func flameBox(id string, svg template.HTML) string {
	if svg == "" {
		return "<p class=\"note\">No samples.</p>\n"
	}
	return fmt.Sprintf(`<div class="flamebox"><label>search <input type="search" data-flame="%s" placeholder="function name or regex"></label> <span class="flamematch" id="%s-match"></span>
%s</div>
`, id, id, svg)
}

func htmlStackDiff(d stacks.Diff, a, b string) string {
	var s strings.Builder
	fmt.Fprintf(&s, `<table class="stackdiff"><thead><tr><th></th><th>%s</th><th>%s</th><th>change (points)</th><th>stack, innermost first</th></tr></thead><tbody>`,
		template.HTMLEscapeString(a), template.HTMLEscapeString(b))
	rows := func(title string, es []stacks.Entry) {
		fmt.Fprintf(&s, `<tr class="group"><th colspan="5">%s</th></tr>`, title)
		if len(es) == 0 {
			s.WriteString(`<tr><td></td><td colspan="4" class="note">none</td></tr>`)
		}
		for _, e := range es {
			line := pmpLine(e.Frames)
			short := line
			if len(short) > 160 {
				short = short[:157] + "..."
			}
			fmt.Fprintf(&s, `<tr><td></td><td class="num">%.1f%%</td><td class="num">%.1f%%</td><td class="num">%+.1f</td><td title="%s"><code>%s</code></td></tr>`,
				100*e.Share, 100*e.ShareB, 100*e.Delta(), template.HTMLEscapeString(line), template.HTMLEscapeString(short))
		}
	}
	rows("only in "+template.HTMLEscapeString(b), d.OnlyB)
	rows("only in "+template.HTMLEscapeString(a), d.OnlyA)
	rows("grew most", d.Grew)
	rows("shrank most", d.Shrank)
	fmt.Fprintf(&s, "</tbody></table>\n<p class=\"note\">%d and %d samples; stacks below %.0f%% of the samples in both left out.</p>\n", d.SamplesA, d.SamplesB, 100*d.Threshold)
	return s.String()
}

// flameScript searches the flame graphs: a frame whose name matches is
// drawn magenta, and the share of the samples under matching frames (their
// union, so a recursive match counts once) is shown.
const flameScript = `<style>
svg.flame { display: block; max-width: 100%; height: auto; margin: 4px 0 20px; font: 11px system-ui, sans-serif; }
svg.flame text { fill: #000; pointer-events: none; }
svg.flame .ctitle { font-size: 13px; font-weight: 600; }
svg.flame g.ff:hover rect { stroke: #000; stroke-width: 0.5; }
.flamebox input { width: 260px; }
table.stackdiff code { white-space: normal; word-break: break-all; font-size: 12px; }
</style>
<script>
(function () {
  function search(input) {
    var svg = document.getElementById(input.dataset.flame), out = document.getElementById(input.dataset.flame + "-match");
    if (!svg) return;
    var q = input.value, re = null;
    if (q) { try { re = new RegExp(q, "i"); } catch (e) { re = null; } }
    var frames = svg.querySelectorAll("g.ff"), spans = [], root = 0;
    for (var i = 0; i < frames.length; i++) {
      var g = frames[i], r = g.querySelector("rect"), n = g.dataset.n;
      if (!r.dataset.c) r.dataset.c = r.getAttribute("fill");
      var w = parseFloat(r.getAttribute("width")), x = parseFloat(r.getAttribute("x"));
      if (i === 0) root = w;
      var hit = q && (re ? re.test(n) : n.toLowerCase().indexOf(q.toLowerCase()) >= 0);
      r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.dataset.c);
      if (hit) spans.push([x, x + w]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -1;
    for (var j = 0; j < spans.length; j++) {
      var s = Math.max(spans[j][0], end), e = spans[j][1];
      if (e > s) sum += e - s;
      end = Math.max(end, e);
    }
    out.textContent = q ? "matched " + (root > 0 ? (100 * sum / root).toFixed(1) : "0") + "% of the samples" : "";
  }
  var inputs = document.querySelectorAll("input[data-flame]");
  for (var i = 0; i < inputs.length; i++) inputs[i].addEventListener("input", function (e) { search(e.target); });
})();
</script>
`
