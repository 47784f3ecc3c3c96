#!/usr/bin/env bash
# The deployment end to end, for real: builds the image of
# deploy/docker/Dockerfile on Debian bases made with mmdebstrap (no image
# registry involved), measures its size and start-up, then starts
# deploy/compose/compose.yaml (Postgres + two nodes) and runs tasks through
# it with a fake model (deploy/e2e, a Go test), and runs
# deploy/systemd/reasonix.service under a real systemd: PID 1 of a
# container built from deploy/e2e/systemd. `make deploy-test` runs it.
#
# Needs root (packages, dockerd, mmdebstrap). It installs docker.io,
# docker-compose and mmdebstrap from Debian when missing, and starts a
# Docker daemon when none answers: with --bridge=none --iptables=false,
# so every container uses the host's network and traffic stays on
# loopback. A daemon it started is stopped at the end (KEEP_DOCKERD=1
# keeps it). The base images are built once and reused (REBUILD_BASES=1
# rebuilds them); NO_CACHE=1 builds the image without Docker's layer cache.
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything is in main, read whole before it runs: bash reads a script as
# it goes, so editing this file during a run would otherwise break the run.
main() {

	say() { echo "deploy-e2e: $* ($(date +%T))"; }
	fail() {
		echo "deploy-e2e: $*" >&2
		exit 1
	}
	[ "$(id -u)" -eq 0 ] || fail "run this as root (it installs packages and starts dockerd)"

	start=$(date +%s.%N)
	need=()
	command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
	command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
	command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
	if [ ${#need[@]} -gt 0 ]; then
		say "installing ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get -o DPkg::Lock::Timeout=300 update -qq
		apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null
	fi

	work=$(mktemp -d /tmp/reasonix-deploy-e2e.XXXXXX)
	dockerd_pid=
	cleanup() {
		if [ -n "$dockerd_pid" ] && [ "${KEEP_DOCKERD:-}" != 1 ]; then
			kill "$dockerd_pid" 2>/dev/null && wait "$dockerd_pid" 2>/dev/null || true
		fi
		rm -rf "$work"
	}
	trap cleanup EXIT

	if ! docker info >/dev/null 2>&1; then
		say "starting dockerd (host networking only: --bridge=none --iptables=false)"
		dockerd --bridge=none --iptables=false --ip6tables=false >"$work/dockerd.log" 2>&1 &
		dockerd_pid=$!
		for _ in $(seq 1 100); do
			docker info >/dev/null 2>&1 && break
			kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited: $(tail -n 5 "$work/dockerd.log")"
			sleep 0.1
		done
		docker info >/dev/null 2>&1 || fail "dockerd did not answer within 10s: $(tail -n 5 "$work/dockerd.log")"
	fi
	# The classic builder: it needs no buildx plugin and no frontend image.
	export DOCKER_BUILDKIT=0

	suite=bookworm
	base_image=reasonix-e2e/base:$suite
	go_version=$(go env GOVERSION)
	builder_image=reasonix-e2e/builder:$suite-$go_version
	postgres_image=reasonix-e2e/postgres:$suite
	systemd_image=reasonix-e2e/systemd:$suite
	# Like debian:bookworm-slim: a merged /usr without the usrmerge package
	# (which pulls in perl), no documentation or translations.
	slim=(--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*')

	# have IMAGE: the image exists and bases are not to be rebuilt.
	have() { [ "${REBUILD_BASES:-}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

	if ! have "$base_image"; then
		say "building $base_image with mmdebstrap"
		mmdebstrap --quiet --variant=minbase "${slim[@]}" "$suite" "$work/base.tar"
		docker import --change 'CMD ["bash"]' "$work/base.tar" "$base_image" >/dev/null
		rm -f "$work/base.tar"
	fi
	if ! have "$builder_image"; then
		# The build stage needs Go as new as go.mod asks, newer than Debian's:
		# this machine's toolchain is copied in.
		say "building $builder_image with mmdebstrap and $(go env GOROOT)"
		mmdebstrap --quiet --variant=minbase "${slim[@]}" --include=make,git,ca-certificates \
			--customize-hook="mkdir -p \"\$1/usr/local\" && cp -a $(go env GOROOT) \"\$1/usr/local/go\"" \
			"$suite" "$work/builder.tar"
		docker import --change 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			--change 'ENV GOTOOLCHAIN=local' "$work/builder.tar" "$builder_image" >/dev/null
		rm -f "$work/builder.tar"
	fi
	if ! have "$postgres_image"; then
		say "building $postgres_image (Debian's postgresql, the official image's variables)"
		docker build -q --network host --build-arg BASE_IMAGE="$base_image" -t "$postgres_image" \
			deploy/e2e/postgres >/dev/null
	fi
	bases_done=$(date +%s.%N)

	# The build context: the sources as git sees them (committed or not, minus
	# ignored files) plus vendor/, so the build needs no module download.
	say "building the image"
	mkdir -p "$work/context"
	git ls-files -z --cached --others --exclude-standard |
		tar --null --files-from=- --ignore-failed-read -cf - | tar -xf - -C "$work/context"
	(cd "$work/context" && GOFLAGS=-mod=mod go mod vendor)
	build_start=$(date +%s.%N)
	# NO_CACHE=1 builds every layer again (a cold build of the image).
	docker build -q --network host ${NO_CACHE:+--no-cache} -f "$work/context/deploy/docker/Dockerfile" \
		--build-arg BUILDER_IMAGE="$builder_image" --build-arg BASE_IMAGE="$base_image" \
		--build-arg GOFLAGS=-mod=vendor --build-arg VERSION="$(git describe --tags --always --dirty 2>/dev/null || echo dev)" \
		-t reasonix:e2e "$work/context" >/dev/null
	build_done=$(date +%s.%N)
	rm -rf "$work/context"

	# The systemd fixture: the image's binary on the base plus systemd, the
	# unit installed as its header says. Its context is deploy/systemd alone.
	say "building $systemd_image (systemd as PID 1, the unit installed)"
	mkdir -p "$work/systemd/deploy"
	cp -r deploy/systemd "$work/systemd/deploy/"
	docker build -q --network host -f deploy/e2e/systemd/Dockerfile \
		--build-arg REASONIX_IMAGE=reasonix:e2e --build-arg BASE_IMAGE="$base_image" \
		-t "$systemd_image" "$work/systemd" >/dev/null
	fixture_done=$(date +%s.%N)

	say "running deploy/e2e against reasonix:e2e and $systemd_image"
	REASONIX_DEPLOY_IMAGE=reasonix:e2e REASONIX_DEPLOY_POSTGRES_IMAGE="$postgres_image" \
		REASONIX_DEPLOY_SYSTEMD_IMAGE="$systemd_image" \
		go test -count=1 -v -timeout 10m ./deploy/e2e/
	end=$(date +%s.%N)

	awk -v s="$start" -v b="$bases_done" -v bs="$build_start" -v bd="$build_done" -v f="$fixture_done" -v e="$end" 'BEGIN {
		printf "deploy-e2e: total %.1fs (bases %.1fs, image build %.1fs, systemd fixture %.1fs, tests %.1fs)\n", e-s, b-s, bd-bs, f-bd, e-f
	}'
}

main "$@"
