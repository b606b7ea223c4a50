#!/usr/bin/env node
// Present before the first build, so that npm links the command at install.
import '../dist/cli.js';
