package bugview

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

// MaxDrawnOps is the most ops the page draws one by one; with more in the
// visible window it draws each rank's density instead.
const MaxDrawnOps = 20000

//go:embed page.html
var pageText string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"inc":  func(i int) int { return i + 1 },
	"sub":  func(a, b float64) float64 { return a - b },
	"size": func(g *WaitGraph) []float64 { w, h := g.Size(); return []float64{w, h} },
}).Parse(pageText))

type pageData struct {
	*Model
	Data        template.JS
	MaxDrawnOps int
}

// WriteHTML writes the model as one self-contained HTML page: no network,
// no external scripts, styles or fonts.
func WriteHTML(w io.Writer, m *Model) error {
	js, err := json.Marshal(m) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("encoding the page data: %w", err)
	}
	var b bytes.Buffer
	if err := page.Execute(&b, pageData{Model: m, Data: template.JS(js), MaxDrawnOps: MaxDrawnOps}); err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}
