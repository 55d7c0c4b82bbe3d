# shellcheck shell=bash disable=SC2034 # the setting_* variables are read by the scripts that source this
# The local settings scripts/dev and scripts/backup share, each read once here: from the
# environment, else from a NAME=value line in .dev.vars (or, before the first scripts/dev, the
# .dev.vars.example it is copied from), else the default. Sourced from the repository root.
#   setting_token, setting_port, setting_state, setting_inspector are set.

settings_file=.dev.vars
[[ -f $settings_file ]] || settings_file=.dev.vars.example
# dev_var NAME: the value on NAME's last line in the file, trimmed, without enclosing quotes
# (the lines wrangler's own .dev.vars reader accepts: spaces around =, an `export ` prefix).
dev_var() {
  sed -n "s/^[[:space:]]*\(export[[:space:]]\{1,\}\)\{0,1\}$1[[:space:]]*=//p" "$settings_file" | tail -n 1 | tr -d '\r' |
    sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'\$/\1/"
}
setting_token=${AUTH_TOKEN:-$(dev_var AUTH_TOKEN)}
setting_port=${PORT:-$(dev_var PORT)}
setting_port=${setting_port:-8787}
setting_state=${HANDOFF_STATE:-$(dev_var HANDOFF_STATE)}
setting_state=${setting_state:-.wrangler/state}
setting_inspector=${INSPECTOR_PORT:-$(dev_var INSPECTOR_PORT)}
