package config

import (
	"bytes"
	"encoding"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxDecodeErrors bounds the problems one file reports.
const maxDecodeErrors = 20

// decodeErrors is every problem decoding data (file path) into a Config
// that the decoder can tell apart. A syntax error stops the parser, so it
// is the only one; but the decoder stops at the first key of a wrong type
// too, which would hide the keys after it, one per run of config check.
// So a file that parses is decoded again key by key (each table's key,
// each entry of an array of tables on its own) and every key's error is
// kept, in the file's order.
func decodeErrors(path string, data []byte, err error) []error {
	var any map[string]any
	if _, perr := toml.NewDecoder(bytes.NewReader(data)).Decode(&any); perr != nil {
		return []error{decodeError(path, perr)}
	}
	var top map[string]toml.Primitive
	md, perr := toml.NewDecoder(bytes.NewReader(data)).Decode(&top)
	if perr != nil {
		return []error{decodeError(path, err)}
	}
	order := map[string]int{}
	for i, k := range md.Keys() {
		if _, ok := order[k.String()]; !ok {
			order[k.String()] = i
		}
	}
	var c Config
	var errs []error
	keyErrors(&md, order, nil, top, reflect.ValueOf(&c).Elem(), &errs)
	if len(errs) == 0 { // the key-by-key decode found nothing: keep the decoder's word
		return []error{decodeError(path, err)}
	}
	var out []error
	seen := map[string]bool{}
	for _, e := range errs {
		if fe := decodeError(path, e); !seen[fe.Error()] && len(out) < maxDecodeErrors {
			seen[fe.Error()] = true
			out = append(out, fe)
		}
	}
	return out
}

// keyErrors decodes each of keys (the keys of the table at prefix) into
// its field of struct rv on its own, going down into tables and arrays of
// tables, and appends each failure to errs. A key with no field is left
// alone: unknown keys are reported by name once the file decodes.
func keyErrors(md *toml.MetaData, order map[string]int, prefix toml.Key, keys map[string]toml.Primitive, rv reflect.Value, errs *[]error) {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	at := func(k string) int {
		if i, ok := order[append(slices.Clone(prefix), k).String()]; ok {
			return i
		}
		return len(order)
	}
	slices.SortFunc(names, func(a, b string) int { return at(a) - at(b) })
	for _, k := range names {
		f, ok := fieldOf(rv, k)
		if !ok {
			continue
		}
		p, key := keys[k], append(slices.Clone(prefix), k)
		switch {
		case isTable(f.Type()):
			var sub map[string]toml.Primitive
			if err := md.PrimitiveDecode(p, &sub); err != nil {
				*errs = append(*errs, err)
				continue
			}
			keyErrors(md, order, key, sub, f, errs)
		case f.Kind() == reflect.Slice && isTable(f.Type().Elem()):
			var entries []toml.Primitive
			if err := md.PrimitiveDecode(p, &entries); err != nil {
				*errs = append(*errs, err)
				continue
			}
			for _, e := range entries {
				var sub map[string]toml.Primitive
				if err := md.PrimitiveDecode(e, &sub); err != nil {
					*errs = append(*errs, err)
					continue
				}
				keyErrors(md, order, key, sub, reflect.New(f.Type().Elem()).Elem(), errs)
			}
		default:
			if err := md.PrimitiveDecode(p, f.Addr().Interface()); err != nil {
				*errs = append(*errs, err)
			}
		}
	}
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	tomlUnmarshaler = reflect.TypeFor[toml.Unmarshaler]()
)

// isTable reports whether t is a struct the decoder fills key by key (not
// one that decodes itself from a value).
func isTable(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	pt := reflect.PointerTo(t)
	return !pt.Implements(textUnmarshaler) && !pt.Implements(tomlUnmarshaler)
}

// fieldOf finds the field of struct rv that TOML key k decodes into, as
// the decoder does: the field's toml tag, else its name, case-blind.
func fieldOf(rv reflect.Value, k string) (reflect.Value, bool) {
	t := rv.Type()
	var fold reflect.Value
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			if f, ok := fieldOf(rv.Field(i), k); ok {
				return f, true
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if name == k {
			return rv.Field(i), true
		}
		if !fold.IsValid() && strings.EqualFold(name, k) {
			fold = rv.Field(i)
		}
	}
	return fold, fold.IsValid()
}
