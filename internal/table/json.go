package table

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
)

func init() { Register(JSON, "JSON, the same numbers as the API's", renderJSON) }

// renderJSON writes the rows as an array of objects, each cell under its
// column's key in the columns' order: its number where it has one, else
// its text.
func renderJSON(w io.Writer, t *Table, _ Options) error {
	rows := make([]object, len(t.Rows))
	for i, row := range t.Rows {
		o := object{}
		for j, c := range row {
			var v any = c.Text
			if c.Value != nil {
				v = c.Value
			}
			o = append(o, field{t.Columns[j].key(), v})
		}
		rows[i] = o
	}
	e := json.NewEncoder(w)
	e.SetIndent("", " ")
	return e.Encode(rows)
}

type field struct {
	key   string
	value any
}

// object is a JSON object whose keys keep the columns' order (a map's
// would be sorted).
type object []field

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		value := f.value
		if x, ok := value.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			value = nil // JSON has no NaN or infinity: null, as report.JSON writes them
		}
		v, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
