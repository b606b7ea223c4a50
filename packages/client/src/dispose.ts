// `await using inbox = await client.createInbox()` needs Symbol.asyncDispose at run
// time. Node 20 defines it; older runtimes and some browsers do not, so it is defined
// here (with Node's own registered symbol) before any class uses it as a method key.
if (typeof (Symbol as { asyncDispose?: symbol }).asyncDispose !== 'symbol') {
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose'), configurable: false, enumerable: false, writable: false });
}

export {};
