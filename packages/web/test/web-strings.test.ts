// The web UI's words live in one module (packages/web/src/strings.ts): this reads every
// other source file of the public page with TypeScript's parser and fails on text a
// person would see or hear written anywhere else — JSX text, a string in a JSX
// expression, a visible or spoken attribute (title, aria-label, placeholder, alt, …),
// and the text of confirm(), alert() and new Error(). Identifiers, class names, keys
// and URLs are not words to translate and pass.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';

const SRC = new URL('../src/', import.meta.url);
/** Where words may be written: the strings module itself. The admin page (src/admin) is the operators' and not translated. */
const EXEMPT = new Set(['strings.ts']);
const SPOKEN = new Set(['title', 'aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'placeholder', 'alt', 'label']);
/** Object properties that name what is shown (a tab's label, a row's title). */
const LABELS = new Set(['label', 'title', 'text', 'message', 'heading']);
/** A literal that reads as words: "Anything Like this", "(no subject)". */
const SENTENCE = /\p{Lu}\p{Ll}+ \p{L}|\(\p{Ll}+ \p{Ll}+\)|\p{Ll}{2,} \p{Ll}{2,} \p{Ll}{2,}/u;
const CALLS = new Set(['confirm', 'alert', 'prompt', 'Error', 'ApiError']);
/** Text with a letter in it, that is not a lone token such as a class name or a MIME type. */
const WORDY = /\p{L}{2,}[^\p{L}]+\p{L}|^\p{Lu}?\p{Ll}+$|[.…:!?]\s*$/u;

function findings(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const literalText = (node: ts.Node): string | undefined =>
    ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : ts.isTemplateExpression(node) ? [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ') : undefined;
  const visit = (node: ts.Node) => {
    if (ts.isJsxText(node) && /\p{L}/u.test(node.text)) at(node, `JSX text ${JSON.stringify(node.text.trim())}`);
    if (ts.isJsxExpression(node) && node.expression && ts.isJsxElement(node.parent)) {
      // {'text'}, {cond ? 'a' : 'b'}, {x || 'text'}: the literals that end up as text.
      const leaves = (e: ts.Expression): ts.Expression[] =>
        ts.isParenthesizedExpression(e) ? leaves(e.expression) : ts.isConditionalExpression(e) ? [...leaves(e.whenTrue), ...leaves(e.whenFalse)] : ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.BarBarToken || e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken) ? [...leaves(e.left), ...leaves(e.right)] : [e];
      for (const leaf of leaves(node.expression)) {
        const t = literalText(leaf);
        if (t !== undefined && /\p{L}/u.test(t)) at(leaf, `text in JSX ${JSON.stringify(t)}`);
      }
    }
    if (ts.isJsxAttribute(node) && SPOKEN.has(node.name.getText()) && node.initializer) {
      const init = node.initializer;
      const t = ts.isStringLiteral(init) ? init.text : ts.isJsxExpression(init) && init.expression ? literalText(init.expression) : undefined;
      if (t !== undefined && /\p{L}/u.test(t)) at(node, `${node.name.getText()}=${JSON.stringify(t)}`);
    }
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && CALLS.has(node.expression.getText())) {
      for (const arg of node.arguments ?? []) {
        const t = literalText(arg);
        if (t !== undefined && WORDY.test(t)) at(arg, `${node.expression.getText()}(${JSON.stringify(t)})`);
      }
    }
    // Anywhere else (a label in an object, a title, an announcement): a literal that reads
    // as words — a capitalised word and another after it, or "(two words)".
    const t = literalText(node);
    if (t !== undefined && !ts.isImportDeclaration(node.parent) && !ts.isJsxAttribute(node.parent) && !ts.isJsxExpression(node.parent) && SENTENCE.test(t) && !found.some((f) => f.includes(JSON.stringify(t)))) at(node, `words ${JSON.stringify(t)}`);
    if (ts.isPropertyAssignment(node) && LABELS.has(node.name.getText())) {
      const v = literalText(node.initializer);
      if (v !== undefined && /\p{L}/u.test(v)) at(node, `${node.name.getText()}: ${JSON.stringify(v)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('web UI strings', () => {
  it('no source file of the page but strings.ts writes user-visible text', () => {
    const files = readdirSync(SRC).filter((f) => /\.tsx?$/.test(f) && !EXEMPT.has(f));
    assert.ok(files.length >= 15, `read ${files.length} files`);
    const found = files.flatMap((f) => findings(f, readFileSync(new URL(f, SRC), 'utf8')));
    assert.deepEqual(found, [], `user-visible text outside strings.ts:\n${found.join('\n')}`);
  });

  it('the check finds what it looks for', () => {
    const sample = [
      "export const A = () => <p title=\"Copy it\" aria-label={'Close'}>Hello <b>{x || '(none)'}</b></p>;",
      "confirm('Delete everything?');",
      'throw new Error(`Failed: ${why}`);',
      "const ok = <span class=\"live on\" data-x=\"a b\">{' '}{count}</span>;",
      "const tabs = [{ key: 'html', label: 'HTML' }]; announce(`New mail from ${who}`); const sel = 'script, style, head';",
    ].join('\n');
    const found = findings('sample.tsx', sample).map((f) => f.replace(/^sample\.tsx:\d+: /, ''));
    assert.deepEqual(found, ['title="Copy it"', 'aria-label="Close"', 'JSX text "Hello"', 'text in JSX "(none)"', 'confirm("Delete everything?")', 'Error("Failed:  ")', 'label: "HTML"', 'words "New mail from  "']);
  });
});
