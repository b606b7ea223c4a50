// Run by the systemd unit before the server (ExecStartPre): a Node that package.json's
// "engines" does not accept stops the start with one line saying which Node it found and
// where a current one comes from, instead of failing later on a syntax or API it lacks.
// Plain ES5 and CommonJS, so that an old Node (Debian 12's is 18, Ubuntu 22.04's 12) runs it.
/* global process, console, require, module, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports */
'use strict';

/** [major, minor, patch] of "20.19.0" or "v20.19.0". */
function parse(version) {
  return String(version)
    .replace(/^v/, '')
    .split('.')
    .map(function (n) {
      return Number(n) || 0;
    });
}

function compare(a, b) {
  for (var i = 0; i < 3; i++) {
    if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) - (b[i] || 0);
  }
  return 0;
}

/** Whether version is in range, written as engines writes it: ">=X.Y.Z" or "^X.Y.Z" parts joined by "||". */
function satisfies(version, range) {
  var v = parse(version);
  return range.split('||').some(function (part) {
    var m = /^\s*(>=|\^)\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(part);
    if (!m) throw new RangeError('package.json engines.node: cannot read the range "' + part.trim() + '"');
    var low = parse(m[2]);
    return compare(v, low) >= 0 && (m[1] === '>=' || v[0] === low[0]);
  });
}

/** The line that says why this Node cannot run the service, or null when it can. */
function problem(version, range, execPath) {
  if (satisfies(version, range)) return null;
  return (
    'temp-inbox needs Node.js ' + range + ' (package.json "engines"), but ' + execPath + ' is ' + version +
    ' (Debian 12 packages Node 18): install a current Node from NodeSource or nodejs.org, see docs/deploy.md section 4.'
  );
}

module.exports = { satisfies: satisfies, problem: problem };

if (require.main === module) {
  var line;
  try {
    line = problem(process.versions.node, require(require('path').join(__dirname, '..', 'package.json')).engines.node, process.execPath);
  } catch (err) {
    line = 'temp-inbox: cannot check the Node version: ' + err.message;
  }
  if (line) {
    console.error(line);
    process.exit(1);
  }
}
