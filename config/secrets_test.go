package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every key ending in _env (but pass_env) is a secret's variable: the test
// sets each one the config structs have, by reflection, so a new key is
// covered without being listed anywhere.
func TestSecretEnvNamesCoversEveryEnvKey(t *testing.T) {
	c := Default()
	var want []string
	fillEnvKeys(reflect.ValueOf(c).Elem(), "", &want)
	if len(want) < 8 {
		t.Fatalf("found only %d *_env keys: %v", len(want), want)
	}
	slices.Sort(want)
	if got := c.SecretEnvNames(); !slices.Equal(got, want) {
		t.Errorf("SecretEnvNames() = %v\nwant %v", got, want)
	}
	c.Tools.Shell.PassEnv = []string{"GOPATH"}
	if slices.Contains(c.SecretEnvNames(), "GOPATH") {
		t.Error("pass_env names were taken for secrets")
	}
}

// fillEnvKeys sets every *_env key under v to a name derived from its path
// and appends the names it set.
func fillEnvKeys(v reflect.Value, path string, set *[]string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := tomlName(t.Field(i))
		if name == "" {
			continue
		}
		f, key := v.Field(i), strings.TrimPrefix(path+"."+name, ".")
		variable := strings.ToUpper(strings.NewReplacer(".", "_", "[", "", "]", "").Replace(key))
		switch {
		case name == "pass_env":
		case strings.HasSuffix(name, "_env") && f.Kind() == reflect.String:
			f.SetString(variable)
			*set = append(*set, variable)
		case strings.HasSuffix(name, "_env") && f.Kind() == reflect.Slice:
			f.Set(reflect.ValueOf([]string{variable + "_1", variable + "_2"}))
			*set = append(*set, variable+"_1", variable+"_2")
		case f.Kind() == reflect.Struct:
			fillEnvKeys(f, key, set)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			fillEnvKeys(f.Index(0), key+"[0]", set)
		}
	}
}
