package config

import (
	"reflect"
	"slices"
	"strings"
)

// SecretEnvNames lists the environment variables the configuration reads
// secrets from: the value of every key whose name ends in "_env" (a
// provider's api_key_env, [serve] api_token_env, [store] dsn_env, the bots'
// token variables, the webhooks' secret_env and secrets_env), sorted and
// each once. The keys are found by reflection, so a new *_env key is a
// secret without anyone remembering to list it here.
func (c *Config) SecretEnvNames() []string {
	var out []string
	collectEnvNames(reflect.ValueOf(c).Elem(), &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// notSecretEnvKeys end in "_env" but name variables that are not secrets:
// [tools.shell] pass_env lists what a command may see.
var notSecretEnvKeys = map[string]bool{"pass_env": true}

func collectEnvNames(v reflect.Value, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectEnvNames(v.Elem(), out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := 0; i < v.Len(); i++ {
				collectEnvNames(v.Index(i), out)
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name := tomlName(t.Field(i))
			if name == "" {
				continue
			}
			f := v.Field(i)
			if !strings.HasSuffix(name, "_env") || notSecretEnvKeys[name] {
				collectEnvNames(f, out)
				continue
			}
			switch f.Kind() {
			case reflect.String:
				if s := strings.TrimSpace(f.String()); s != "" {
					*out = append(*out, s)
				}
			case reflect.Slice:
				if f.Type().Elem().Kind() == reflect.String {
					for j := 0; j < f.Len(); j++ {
						if s := strings.TrimSpace(f.Index(j).String()); s != "" {
							*out = append(*out, s)
						}
					}
				}
			}
		}
	}
}
