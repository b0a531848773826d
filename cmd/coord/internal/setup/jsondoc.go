package setup

import (
	"bytes"
	"encoding/json"
)

// object is a JSON object that keeps its keys in order, so that setup
// changes the entries it owns and leaves the rest of a user's file as it
// was (order included).
type object struct {
	keys []string
	vals map[string]any // *object, []any, string, json.Number, bool, nil
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set sets k, in place if present, else at the end.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// parseObject reads a JSON document whose top level is an object (see
// parseJSONText). An empty (or all-space) document is an empty object.
func parseObject(data []byte) (*object, error) {
	n, err := parseJSONText(data, false)
	if err != nil || n == nil {
		return newObject(), err
	}
	return n.model(data).(*object), nil
}

// marshal writes v as indented JSON (two spaces, as the agents write
// their own files), keys in order, with a final newline: a file setup
// creates.
func marshal(v any) []byte {
	var b bytes.Buffer
	writeStyled(&b, v, "", textStyle{unit: "  ", nl: "\n", colon: ": "})
	b.WriteByte('\n')
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}

// str returns v as a string ("" if it is not one).
func str(v any) string {
	s, _ := v.(string)
	return s
}
