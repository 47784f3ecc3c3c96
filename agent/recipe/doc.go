// Package recipe loads the Markdown recipes a team keeps beside its code:
// custom commands (.reasonix/commands/**/*.md, "/review", "/git:commit")
// and sub-agent profiles (.reasonix/skills/<name>/SKILL.md with
// runAs: subagent).
//
// Loading is pure: callers read the files (from a repository's base
// commit, from the user's config directory) and hand them over as Layers;
// the package parses, namespaces and overrides, and reports a malformed
// file as a Warning instead of failing. A command is only text: rendering
// one yields a prompt and nothing else, so a recipe can never carry
// permissions. A profile may only narrow what a child can do
// (ProfileFromSkill is the one place skill front matter becomes a
// Profile).
package recipe
