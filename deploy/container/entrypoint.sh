#!/bin/sh
# The container's entrypoint: `toolmgmt serve` with the arguments given (the image's CMD by
# default). Each variable NAME_FILE naming a file under $TOOLMGMT_SECRETS_DIR (/run/secrets: a
# Docker, compose or Kubernetes secret mounted as a file) sets NAME to that file's content
# first, so a config's token_env = "NAME" reads it; NAME itself, when set, wins. Other *_FILE
# variables (CA bundles...) are left alone.
set -eu
secrets_dir="${TOOLMGMT_SECRETS_DIR:-/run/secrets}"
for name in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)_FILE=.*$/\1/p'); do
    # $name matched [A-Za-z_][A-Za-z0-9_]*: safe to expand by eval
    eval "current=\${$name:-}; file=\${${name}_FILE}"
    case "$file" in
        "$secrets_dir"/*) ;;
        *) continue ;;
    esac
    if [ -z "$current" ]; then
        if [ ! -r "$file" ]; then
            echo "toolmgmt-entrypoint: ${name}_FILE names $file, which cannot be read" >&2
            exit 2
        fi
        value="$(cat "$file")"
        export "$name=$value"
    fi
    unset "${name}_FILE"
done
exec toolmgmt serve "$@"
