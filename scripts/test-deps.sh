#!/usr/bin/env bash
# Installs the system packages the tests use for real: bubblewrap (the bash
# sandbox) and git (workspaces). Needs root when something is missing.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "test-deps: missing ${need[*]}; install them (as root: apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "test-deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
