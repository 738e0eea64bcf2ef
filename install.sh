#!/bin/sh
# Installs paneflow: downloads the release binary for this OS and CPU,
# verifies its sha256, and installs it with its two other names.
#
#   curl -fsSL https://raw.githubusercontent.com/paneflow/paneflow/main/install.sh | sh
#
# Environment:
#   PANEFLOW_INSTALL_DIR   where to install (default: $HOME/.local/bin)
#   PANEFLOW_VERSION       a release tag such as v0.1.0 (default: the latest release)
#   PANEFLOW_DOWNLOAD_BASE where the release assets are (default: the GitHub
#                          release of PANEFLOW_VERSION); assets are
#                          paneflow-<os>-<arch> and paneflow-<os>-<arch>.sha256
#
# POSIX sh. Exits non-zero, having installed nothing, on any failure.
set -eu

REPO_URL="https://github.com/paneflow/paneflow"

say() { printf '%s\n' "paneflow install: $*"; }
fail() {
	printf '%s\n' "paneflow install: error: $*" >&2
	exit 1
}

detect_os() {
	os=$(uname -s 2>/dev/null) || fail "cannot run uname to detect the operating system"
	case "$os" in
	Linux) echo linux ;;
	Darwin) echo darwin ;;
	*) fail "unsupported operating system '$os' (paneflow ships for Linux and macOS)" ;;
	esac
}

detect_arch() {
	arch=$(uname -m 2>/dev/null) || fail "cannot run uname to detect the CPU architecture"
	case "$arch" in
	x86_64 | amd64) echo x86_64 ;;
	aarch64 | arm64) echo aarch64 ;;
	*) fail "unsupported CPU architecture '$arch' (paneflow ships for x86_64 and aarch64)" ;;
	esac
}

# download <url> <file>
download() {
	if command -v curl >/dev/null 2>&1; then
		curl --fail --silent --show-error --location --retry 2 --output "$2" "$1" </dev/null
	elif command -v wget >/dev/null 2>&1; then
		wget --quiet --output-document="$2" "$1" </dev/null
	else
		fail "neither curl nor wget is installed; install one of them and run this again"
	fi
}

# sha256_of <file>: prints the lowercase hex digest
sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | awk '{print tolower($1)}'
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | awk '{print tolower($1)}'
	elif command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha256 -r "$1" | awk '{print tolower($1)}'
	else
		fail "no sha256 tool found (sha256sum, shasum or openssl); cannot verify the download"
	fi
}

main() {
	os=$(detect_os)
	arch=$(detect_arch)
	asset="paneflow-$os-$arch"
	if [ -n "${PANEFLOW_VERSION:-}" ]; then
		default_base="$REPO_URL/releases/download/$PANEFLOW_VERSION"
	else
		default_base="$REPO_URL/releases/latest/download"
	fi
	base="${PANEFLOW_DOWNLOAD_BASE:-$default_base}"
	base="${base%/}"
	if [ -n "${PANEFLOW_INSTALL_DIR:-}" ]; then
		dir="$PANEFLOW_INSTALL_DIR"
	elif [ -n "${HOME:-}" ]; then
		dir="$HOME/.local/bin"
	else
		fail "HOME is not set; set PANEFLOW_INSTALL_DIR to where paneflow should go"
	fi

	tmp=$(mktemp -d 2>/dev/null || mktemp -d -t paneflow) || fail "cannot create a temporary directory"
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	say "downloading $base/$asset"
	download "$base/$asset" "$tmp/$asset" ||
		fail "could not download $base/$asset (is there a release for $os $arch?)"
	download "$base/$asset.sha256" "$tmp/$asset.sha256" ||
		fail "could not download the checksum $base/$asset.sha256"

	expected=$(awk 'NR == 1 {print tolower($1)}' "$tmp/$asset.sha256")
	case "$expected" in
	*[!0-9a-f]*) fail "$asset.sha256 does not hold a sha256 digest" ;;
	esac
	[ "${#expected}" -eq 64 ] || fail "$asset.sha256 does not hold a sha256 digest"
	actual=$(sha256_of "$tmp/$asset")
	[ "$actual" = "$expected" ] ||
		fail "checksum mismatch for $asset: expected $expected, got $actual; nothing was installed"
	say "sha256 verified ($actual)"

	chmod 755 "$tmp/$asset"
	version=$("$tmp/$asset" version 2>&1 </dev/null) ||
		fail "the downloaded binary does not run on this machine: $version"

	mkdir -p "$dir" || fail "cannot create $dir"
	[ -w "$dir" ] || fail "$dir is not writable; set PANEFLOW_INSTALL_DIR to a directory you can write"
	# Copy next to the target, then rename over it: an old paneflow that is
	# running keeps its file, and a failed copy leaves nothing half-written.
	cp "$tmp/$asset" "$dir/.paneflow.new.$$" || fail "cannot write to $dir"
	chmod 755 "$dir/.paneflow.new.$$"
	mv -f "$dir/.paneflow.new.$$" "$dir/paneflow" || {
		rm -f "$dir/.paneflow.new.$$"
		fail "cannot install $dir/paneflow"
	}
	for name in paneflow-mcp paneflow-ai-hook; do
		rm -f "$dir/$name"
		ln -s paneflow "$dir/$name" || fail "cannot create the symlink $dir/$name"
	done

	say "installed $version to $dir/paneflow"
	say "linked $dir/paneflow-mcp and $dir/paneflow-ai-hook to it"
	case ":${PATH:-}:" in
	*":$dir:"*) ;;
	*) say "$dir is not on your PATH; add it, e.g.: export PATH=\"$dir:\$PATH\"" ;;
	esac
}

main "$@"
