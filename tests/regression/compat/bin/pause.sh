#!/bin/sh
# Lets time pass inside a request: the rule that runs it (exec) holds the
# transaction for two seconds, so that a time-based action (expirevar,
# deprecatevar) can be seen to act by the rules after it or by the next
# request. Used by compat/expirevar*.conf.
sleep 2
echo paused
