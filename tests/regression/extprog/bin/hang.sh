#!/bin/sh
# Never answers: the engine must give up at SecExternalProgramTimeout.
sleep 600
