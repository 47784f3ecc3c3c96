package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// misCasedKeys finds keys that name a field only when case is ignored. The
// decoder accepts them (it matches case-insensitively) but per-key layering
// looks keys up exactly, so "Max_Steps" would be decoded and then silently
// dropped. TOML keys are case-sensitive; reject them instead. Each result
// is the offending key and the spelling it should have.
func misCasedKeys(md toml.MetaData) [][2]string {
	var out [][2]string
	reported := map[string]bool{}
	for _, k := range md.Keys() {
		t := reflect.TypeOf(Config{})
	walk:
		for i, piece := range k {
			for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
				t = t.Elem()
			}
			switch t.Kind() {
			case reflect.Map:
				t = t.Elem() // piece is a user-chosen map key
			case reflect.Struct:
				f, exact := fieldByTag(t, piece)
				if f == nil {
					break walk // unknown: reported via Undecoded
				}
				if !exact {
					key := k[:i+1].String()
					if !reported[key] {
						reported[key] = true
						out = append(out, [2]string{key, tomlName(*f)})
					}
					break walk
				}
				t = f.Type
			default:
				break walk
			}
		}
	}
	return out
}

// fieldByTag finds the field whose toml name is piece, exactly or else
// ignoring case.
func fieldByTag(t reflect.Type, piece string) (*reflect.StructField, bool) {
	var folded *reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		if name == piece {
			return &f, true
		}
		if folded == nil && strings.EqualFold(name, piece) {
			folded = &f
		}
	}
	return folded, false
}
