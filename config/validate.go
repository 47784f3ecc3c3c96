package config

import (
	"fmt"
	"strings"
)

// Validate checks every field and returns one error per problem, joined
// with errors.Join, each naming the key and the file (or flag) its value
// came from. Load calls it; call it again after applying flags.
func (c *Config) Validate() error {
	var p problems
	names := map[string]string{} // entry label prefix + name -> source, for duplicates
	dup := func(kind, name, source, label string) {
		if name == "" {
			return
		}
		key := kind + "\x00" + name
		if first, ok := names[key]; ok {
			p.add(source, label+".name", "%q is declared twice (first in %s)", name, orDefault(first))
			return
		}
		names[key] = source
	}
	for i := range c.Providers {
		e := &c.Providers[i]
		label := entryLabel("providers", e.Name, i)
		e.validate(label, &p)
		dup("providers", e.Name, e.Source, label)
	}
	for i := range c.Plugins {
		e := &c.Plugins[i]
		label := entryLabel("plugins", e.Name, i)
		e.validate(label, &p)
		dup("plugins", e.Name, e.Source, label)
	}
	for i := range c.Workspaces {
		e := &c.Workspaces[i]
		label := entryLabel("workspaces", e.Name, i)
		e.validate(label, &p)
		dup("workspaces", e.Name, e.Source, label)
	}
	for i := range c.Schedules {
		e := &c.Schedules[i]
		label := entryLabel("schedules", e.Name, i)
		e.validate(c, label, &p)
		dup("schedules", e.Name, e.Source, label)
	}
	for i := range c.Webhooks {
		e := &c.Webhooks[i]
		label := entryLabel("webhooks", e.Name, i)
		e.validate(c, label, &p)
		dup("webhooks", e.Name, e.Source, label)
	}
	c.Agent.validate(c, &p)
	c.Tools.validate(c, &p)
	c.Permissions.validate(c, &p)
	c.Sandbox.validate(c, &p)
	c.Store.validate(c, &p)
	c.Runner.validate(c, &p)
	c.Serve.validate(c, &p)
	c.Bot.validate(c, &p)
	c.Skills.validate(c, &p)
	if c.DefaultModel != "" {
		if _, err := c.ResolveModel(c.DefaultModel); err != nil {
			p.add(c.origins["default_model"], "default_model", "%s", strings.TrimPrefix(err.Error(), "config: "))
		}
	}
	return p.err()
}

// entryLabel names an array-of-tables entry in messages: by name when it
// has a usable one, else by position.
func entryLabel(kind, name string, i int) string {
	if name != "" && validEntryName(name) {
		return fmt.Sprintf("%s[%s]", kind, name)
	}
	return fmt.Sprintf("%s[%d]", kind, i)
}

func orDefault(source string) string {
	if source == "" {
		return "defaults"
	}
	return source
}
