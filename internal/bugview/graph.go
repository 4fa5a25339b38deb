package bugview

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// WaitGraph is the wait-for graph of a deadlock or hang: a node per rank
// blocked in a call (or waited on), an edge from a blocked rank to the rank
// its call waits for.
type WaitGraph struct {
	Nodes      []Node
	Edges      []Edge
	Candidates []string // the nearest unmatched candidates, as the report words them
}

// Node is one rank of a wait-for graph. X and Y place it on the page.
type Node struct {
	Rank    int
	Call    string // the blocked call ("" for a rank only waited on)
	Site    string
	InCycle bool
	X, Y    float64
}

// Edge is "From waits for To".
type Edge struct {
	From, To int
	InCycle  bool
	// The page's curve, from border to border of the two nodes, bent to one
	// side so that the edges of two ranks waiting on each other both show.
	X1, Y1, X2, Y2, CX, CY float64
}

// MaxGraphNodes is how many nodes the page draws of a wait-for graph (the
// DOT export has them all); the page lists how many it left out.
const MaxGraphNodes = 48

func waitGraph(f *Finding) *WaitGraph {
	g := &WaitGraph{Candidates: f.Candidates}
	at := map[int]int{}
	node := func(rank int) *Node {
		if i, ok := at[rank]; ok {
			return &g.Nodes[i]
		}
		at[rank] = len(g.Nodes)
		g.Nodes = append(g.Nodes, Node{Rank: rank})
		return &g.Nodes[len(g.Nodes)-1]
	}
	cycle := map[[2]int]bool{}
	for i := 0; i+1 < len(f.Cycle); i++ {
		cycle[[2]int{f.Cycle[i], f.Cycle[i+1]}] = true
	}
	inCycle := map[int]bool{}
	for _, r := range f.Cycle {
		inCycle[r] = true
	}
	edges := map[[2]int]bool{}
	for _, o := range f.Ops {
		n := node(o.Rank)
		n.Call, n.Site = describe(o), o.Site
		if o.Peer >= 0 && o.Peer != o.Rank {
			edges[[2]int{o.Rank, o.Peer}] = true
		}
	}
	for e := range cycle {
		edges[e] = true
	}
	keys := make([][2]int, 0, len(edges))
	for e := range edges {
		keys = append(keys, e)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for _, e := range keys {
		node(e[0])
		node(e[1])
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1], InCycle: cycle[e]})
	}
	for i := range g.Nodes {
		g.Nodes[i].InCycle = inCycle[g.Nodes[i].Rank]
	}
	g.layout()
	return g
}

// describe words a blocked call like the report: "Send to rank 1 tag 0".
func describe(o OpRef) string {
	switch {
	case strings.Contains(o.Op, "Send") || strings.Contains(o.Op, "send"):
		return fmt.Sprintf("%s to rank %d tag %s", o.Op, o.Peer, tagString(o.Tag))
	case o.Peer == -1:
		return fmt.Sprintf("%s from any rank tag %s", o.Op, tagString(o.Tag))
	case o.Peer >= 0:
		return fmt.Sprintf("%s from rank %d tag %s", o.Op, o.Peer, tagString(o.Tag))
	}
	return o.Op
}

func tagString(t int) string {
	if t < 0 {
		return "any"
	}
	return fmt.Sprint(t)
}

// Page geometry of a wait-for graph.
const (
	graphNodeW = 400
	graphNodeH = 54
)

// layout places the first MaxGraphNodes nodes on a circle.
func (g *WaitGraph) layout() {
	n := min(len(g.Nodes), MaxGraphNodes)
	r := math.Max(110, float64(n)*(graphNodeH+8)/(2*math.Pi)*1.2)
	cx, cy := r+graphNodeW/2+10, r+graphNodeH/2+10
	pos := map[int][2]float64{}
	for i := range g.Nodes[:n] {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		g.Nodes[i].X, g.Nodes[i].Y = cx+r*math.Cos(a), cy+r*math.Sin(a)
		pos[g.Nodes[i].Rank] = [2]float64{g.Nodes[i].X, g.Nodes[i].Y}
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		a, ok1 := pos[e.From]
		b, ok2 := pos[e.To]
		if !ok1 || !ok2 {
			continue
		}
		x1, y1 := clip(a, b)
		x2, y2 := clip(b, a)
		e.X1, e.Y1, e.X2, e.Y2 = x1, y1, x2, y2
		// The control point: off the middle, perpendicular, by a fifth of the length.
		dx, dy := x2-x1, y2-y1
		e.CX, e.CY = (x1+x2)/2+dy/5, (y1+y2)/2-dx/5
	}
}

// clip returns where the line from a's center to b leaves a's box.
func clip(a, b [2]float64) (float64, float64) {
	dx, dy := b[0]-a[0], b[1]-a[1]
	if dx == 0 && dy == 0 {
		return a[0], a[1]
	}
	t := math.Min(graphNodeW/2/math.Max(math.Abs(dx), 1e-9), graphNodeH/2/math.Max(math.Abs(dy), 1e-9))
	return a[0] + dx*math.Min(t, 1), a[1] + dy*math.Min(t, 1)
}

// Drawn is the nodes the page draws.
func (g *WaitGraph) Drawn() []Node { return g.Nodes[:min(len(g.Nodes), MaxGraphNodes)] }

// DrawnEdges is the edges between drawn nodes.
func (g *WaitGraph) DrawnEdges() []Edge {
	drawn := map[int]bool{}
	for _, n := range g.Drawn() {
		drawn[n.Rank] = true
	}
	var out []Edge
	for _, e := range g.Edges {
		if drawn[e.From] && drawn[e.To] {
			out = append(out, e)
		}
	}
	return out
}

// LeftOut is how many nodes the page does not draw.
func (g *WaitGraph) LeftOut() int { return len(g.Nodes) - len(g.Drawn()) }

// Size is the page's box of the drawn graph.
func (g *WaitGraph) Size() (w, h float64) {
	for _, n := range g.Drawn() {
		w, h = math.Max(w, n.X+graphNodeW/2+10), math.Max(h, n.Y+graphNodeH/2+10)
	}
	return w, h
}

// WriteDOT writes the wait-for graphs of the model's deadlocks and hangs
// for Graphviz: one cluster per finding, blocked calls with file:line in
// the nodes, the cycle in red, unmatched candidates as notes.
func WriteDOT(w io.Writer, m *Model) error {
	var b strings.Builder
	b.WriteString("digraph waitfor {\n")
	fmt.Fprintf(&b, "  label=%s;\n  labelloc=t;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n", quote("p2ptrace wait-for graph: "+m.Title))
	graphs := 0
	for i, f := range m.Findings {
		g := f.Graph
		if g == nil {
			continue
		}
		graphs++
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i+1, quote(fmt.Sprintf("[%d] %s (%s)", i+1, f.Kind, f.RevealedBy)))
		for _, n := range g.Nodes {
			label := fmt.Sprintf("rank %d", n.Rank)
			if n.Call != "" {
				label += "\nblocked in " + n.Call
				if n.Site != "" {
					label += "\nat " + n.Site
				}
			} else {
				label += "\n(waited on, not blocked)"
			}
			attrs := ""
			if n.InCycle {
				attrs = ", color=red, penwidth=2"
			}
			fmt.Fprintf(&b, "    f%d_r%d [label=%s%s];\n", i+1, n.Rank, quote(label), attrs)
		}
		for _, e := range g.Edges {
			attrs := ` [label="waits for"]`
			if e.InCycle {
				attrs = ` [label="waits for", color=red, penwidth=2]`
			}
			fmt.Fprintf(&b, "    f%d_r%d -> f%d_r%d%s;\n", i+1, e.From, i+1, e.To, attrs)
		}
		for j, c := range g.Candidates {
			fmt.Fprintf(&b, "    f%d_c%d [shape=note, style=dashed, label=%s];\n", i+1, j, quote("unmatched candidate:\n"+c))
		}
		b.WriteString("  }\n")
	}
	if graphs == 0 {
		fmt.Fprintf(&b, "  none [shape=plaintext, label=%s];\n", quote("no deadlock or hang in this trace's findings"))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// quote is a DOT string literal.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
