import fs from 'node:fs';
import path from 'node:path';

/**
 * The README and docs/ link to each other, to the code and to the screenshots: every relative link must
 * lead somewhere, and the README stays a page a newcomer reads (at most 250 lines; the rest is in docs/).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const README = path.join(ROOT, 'README.md');
const README_MAX_LINES = 250;

/** README.md and every Markdown file under docs/, at any depth. */
function markdownFiles(): string[] {
  const docs = path.join(ROOT, 'docs');
  const found = fs
    .readdirSync(docs, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => path.join(entry.parentPath, entry.name));
  return [README, ...found.sort()];
}

/** The text without fenced code blocks and inline code spans: what is in them is code, not links. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * The targets of every link and image in the text: `[text](target)`, `![alt](target)`, an image inside a
 * link, and a target with a title (`[text](target "title")`).
 */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of proseOf(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) targets.push(match[1]);
  return targets;
}

/** Links to other places (the web, mail) and to an anchor of the same page are not files. */
const isRelative = (target: string) => !/^(https?:|mailto:)/i.test(target) && !target.startsWith('#');

test('every relative link and image in README.md and docs/ resolves to a file or folder that exists', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of markdownFiles()) {
    for (const target of linkTargets(fs.readFileSync(file, 'utf8')).filter(isRelative)) {
      const withoutFragment = decodeURIComponent(target.replace(/[#?].*$/, ''));
      const resolved = path.resolve(path.dirname(file), withoutFragment);
      checked += 1;
      if (!fs.existsSync(resolved)) broken.push(`${path.relative(ROOT, file)}: ${target}`);
    }
  }
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(0);
});

test(`README.md has at most ${README_MAX_LINES} lines`, () => {
  const lines = fs.readFileSync(README, 'utf8').split('\n');
  const count = lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
  expect(count).toBeLessThanOrEqual(README_MAX_LINES);
});
