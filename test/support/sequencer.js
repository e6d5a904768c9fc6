// @ts-check
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const DURATIONS = path.join(__dirname, 'file-durations.json');

/**
 * Longest files first, from the times `npm test` recorded (test/support/file-durations.json, by stage).
 * A fresh clone has no jest cache, and jest then starts files by size: a two-minute file could start
 * last and run alone at the end while the other workers sit idle. A file with no recorded time (a new
 * one) starts first, since nothing says it is short.
 */
class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const recorded = readDurations()[process.env.OPSFLOW_STAGE || 'jest'] || {};
    const rootOf = (test) => test.context.config.rootDir;
    const secondsOf = (test) => recorded[path.relative(rootOf(test), test.path)] ?? Number.POSITIVE_INFINITY;
    return [...tests].sort((a, b) => secondsOf(b) - secondsOf(a) || a.path.localeCompare(b.path));
  }
}

function readDurations() {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

module.exports = LongestFirstSequencer;
