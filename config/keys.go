package config

import (
	"reflect"
	"time"
)

// Keys lists every key the configuration takes, as dotted paths ("serve.addr",
// "bot.slack.mode"); the keys of an array of tables are listed under its
// name ("plugins.name"). Tests walk it so that a new key cannot skip a rule:
// its trust classification here, and the agreement of `config check` and
// `serve` in cmd/reasonix.
func Keys() []string { return configKeys(reflect.TypeOf(Config{}), "") }

// configKeys lists every key the config structs take, as dotted paths;
// the keys of an array of tables are listed under its name.
func configKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name := tomlName(t.Field(i))
		if name == "" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Duration(0)):
			out = append(out, configKeys(ft, key)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), key)...)
		default:
			out = append(out, key)
		}
	}
	return out
}
