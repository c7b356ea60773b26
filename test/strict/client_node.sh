#!/usr/bin/env bash
# Node.js with the `pg` package end to end (test/client/ids.js); strict
# mode, since it checks that ids increase in insertion order.
exec bash "$(dirname "$0")/../client/node.sh"
