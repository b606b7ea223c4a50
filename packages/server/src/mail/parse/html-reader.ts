// Reads HTML with htmlparser2's Tokenizer: a state machine, linear in its input whatever
// the nesting (its Parser is not: it keeps open elements in an array it unshifts and
// searches, 63 s for 100,000 nested <div>; docs/decisions.md "Libraries").
import { Tokenizer } from 'htmlparser2';

export interface HtmlHandlers {
  text?(text: string): void;
  /** An opening tag's name (lower case) and the offset just past it. */
  open?(name: string, end: number): void;
  close?(name: string): void;
  /** An attribute of the element being opened: its name (lower case) and raw value. */
  attribute?(name: string, value: string): void;
}

/** Calls the handlers for each piece of the HTML, in order; entities are left as written. */
export function readHtml(html: string, on: HtmlHandlers): void {
  let attrName = '';
  let attrValue = '';
  const slice = (start: number, end: number) => html.slice(start, end);
  // Text comes in pieces (each stray "<" is one): adjacent pieces are handed on as one.
  let textStart = -1;
  let textEnd = -1;
  const flush = () => {
    if (textStart >= 0) on.text?.(slice(textStart, textEnd));
    textStart = -1;
  };
  const then = <A extends unknown[]>(f: (...args: A) => void) => (...args: A) => {
    flush();
    f(...args);
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      ontext: (start, end) => {
        if (textStart >= 0 && start === textEnd) textEnd = end;
        else {
          flush();
          textStart = start;
          textEnd = end;
        }
      },
      ontextentity: () => {},
      onopentagname: then((start: number, end: number) => on.open?.(slice(start, end).toLowerCase(), end)),
      onopentagend: () => {},
      onselfclosingtag: () => {},
      onclosetag: then((start: number, end: number) => on.close?.(slice(start, end).toLowerCase())),
      onattribname: (start, end) => {
        attrName = slice(start, end).toLowerCase();
        attrValue = '';
      },
      onattribdata: (start, end) => {
        attrValue += slice(start, end);
      },
      onattribentity: () => {},
      onattribend: () => on.attribute?.(attrName, attrValue),
      oncdata: () => {},
      oncomment: then(() => {}),
      ondeclaration: () => {},
      onprocessinginstruction: () => {},
      onend: flush,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}
