package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A tool's input schema, inferred from its input struct as the JSON
// Schema of an object: one property per field, named by its json tag and
// described by its jsonschema tag (the words every agent reads in
// tools/list, so few), required unless the tag says omitempty, no other
// properties. Only the field types the tools use are known: string, bool,
// int and int64 ("integer"), *int (an integer or null), []string (an
// array of strings or null) and any (any JSON value); another type is a
// programming error, found when the tool is added.
type schema struct {
	props    []prop
	required []string
}

// prop is one property: its name, its JSON types ("" for any value) and
// its description.
type prop struct {
	name  string
	types []string // "string", "integer", "boolean", "array" (of strings), "null"
	desc  string
}

// schemaOf infers the schema of In; it panics on a field type it does not
// know.
func schemaOf[In any]() *schema {
	t := reflect.TypeFor[In]()
	sch := &schema{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" || !f.IsExported() {
			panic(fmt.Sprintf("mcpserver: field %s.%s has no json name", t.Name(), f.Name))
		}
		p := prop{name: name, desc: f.Tag.Get("jsonschema")}
		switch {
		case f.Type.Kind() == reflect.String:
			p.types = []string{"string"}
		case f.Type.Kind() == reflect.Bool:
			p.types = []string{"boolean"}
		case f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64:
			p.types = []string{"integer"}
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Int:
			p.types = []string{"null", "integer"}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			p.types = []string{"null", "array"}
		case f.Type.Kind() == reflect.Interface && f.Type.NumMethod() == 0:
		default:
			panic(fmt.Sprintf("mcpserver: field %s.%s: type %s has no schema here", t.Name(), f.Name, f.Type))
		}
		sch.props = append(sch.props, p)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			sch.required = append(sch.required, name)
		}
	}
	return sch
}

// MarshalJSON writes the schema as tools/list gives it, the properties in
// the struct's order.
func (sch *schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object"`)
	if len(sch.props) > 0 {
		b.WriteString(`,"properties":{`)
		for i, p := range sch.props {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(p.name)
			b.Write(name)
			b.WriteString(`:{`)
			sep := ""
			switch len(p.types) {
			case 0:
			case 1:
				fmt.Fprintf(&b, `"type":%q`, p.types[0])
				sep = ","
			default:
				types, _ := json.Marshal(p.types)
				fmt.Fprintf(&b, `"type":%s`, types)
				sep = ","
			}
			if slices.Contains(p.types, "array") {
				b.WriteString(sep + `"items":{"type":"string"}`)
				sep = ","
			}
			if p.desc != "" {
				desc, _ := json.Marshal(p.desc)
				b.WriteString(sep + `"description":`)
				b.Write(desc)
			}
			b.WriteByte('}')
		}
		b.WriteByte('}')
	}
	if len(sch.required) > 0 {
		req, _ := json.Marshal(sch.required)
		b.WriteString(`,"required":`)
		b.Write(req)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes(), nil
}

// decode checks a call's arguments against the schema and decodes them
// into in. Absent or null arguments are an empty object. An error says
// what does not fit (a usage refusal).
func (sch *schema) decode(args json.RawMessage, in any) error {
	args = bytes.Trim(args, jsonSpace)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var members map[string]json.RawMessage
	if args[0] != '{' || json.Unmarshal(args, &members) != nil {
		return fmt.Errorf("invalid arguments: not a JSON object")
	}
	var unknown []string
	for name := range members {
		if !slices.ContainsFunc(sch.props, func(p prop) bool { return p.name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("invalid arguments: unexpected properties %q", unknown)
	}
	var missing []string
	for _, name := range sch.required {
		if _, ok := members[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("invalid arguments: missing properties %q", missing)
	}
	for _, p := range sch.props {
		v, ok := members[p.name]
		if !ok || len(p.types) == 0 {
			continue
		}
		if got := jsonType(v); !slices.Contains(p.types, got) {
			return fmt.Errorf("invalid arguments: %s is %s, want %s", p.name, got, strings.Join(p.types, " or "))
		}
		if jsonType(v) == "array" {
			var items []json.RawMessage
			json.Unmarshal(v, &items)
			for i, it := range items {
				if jsonType(it) != "string" {
					return fmt.Errorf("invalid arguments: %s[%d] is %s, want string", p.name, i, jsonType(it))
				}
			}
		}
	}
	if err := json.Unmarshal(args, in); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// jsonSpace is JSON's whitespace (bytes.TrimSpace trims more).
const jsonSpace = " \t\r\n"

// jsonType is the JSON Schema type of a valid JSON value: "integer" for a
// number without a fraction or exponent, "number" for other numbers.
func jsonType(v json.RawMessage) string {
	v = bytes.Trim(v, jsonSpace)
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}
