// Route schemas are compiled once per process (http/schema-compilers.ts): a second app's
// compilers hand back the functions the first compiled, a different schema or part gets its
// own, and the kept validators still refuse what they refused, with the same options.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cachedSchemaCompilers } from '../../src/http/schema-compilers.js';

type Compile = (route: { method: string; url: string; httpPart?: string; httpStatus?: string; schema: unknown }) => (doc: unknown) => unknown;
const factories = cachedSchemaCompilers!.compilersFactory!;
const validatorFor = factories.buildValidator as unknown as (external: object, options: object) => Compile;
const serializerFor = factories.buildSerializer as unknown as (external: object, options: object) => Compile;
const OPTIONS = { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } };
const body = { type: 'object', properties: { name: { type: 'string', maxLength: 4 } }, required: ['name'], additionalProperties: false };

describe('schema compilers kept for the process', () => {
  it('a second app gets the validator the first compiled; another schema or other options get their own', () => {
    const first = validatorFor({}, OPTIONS)({ method: 'POST', url: '/a', httpPart: 'body', schema: body });
    const second = validatorFor({}, OPTIONS)({ method: 'POST', url: '/b', httpPart: 'body', schema: structuredClone(body) });
    assert.equal(second, first);
    assert.notEqual(validatorFor({}, OPTIONS)({ method: 'POST', url: '/a', httpPart: 'body', schema: { ...body, required: [] } }), first);
    assert.notEqual(validatorFor({}, { customOptions: { coerceTypes: true } })({ method: 'POST', url: '/a', httpPart: 'body', schema: body }), first);
  });

  it('the kept validator still refuses a wrong type, an extra field and a long name without coercion', () => {
    const validate = validatorFor({}, OPTIONS)({ method: 'POST', url: '/a', httpPart: 'body', schema: body });
    assert.equal(validate({ name: 'abc' }), true);
    assert.equal(validate({ name: 5 }), false);
    assert.equal(validate({ name: 'abc', extra: 1 }), false);
    assert.equal(validate({ name: 'abcde' }), false);
  });

  it('serializers are kept by schema and still drop fields the schema does not name', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } } };
    const first = serializerFor({}, {})({ method: 'GET', url: '/a', httpStatus: '200', schema });
    assert.equal(serializerFor({}, {})({ method: 'GET', url: '/b', httpStatus: '201', schema: structuredClone(schema) }), first);
    assert.equal(first({ id: 'x', secret: 'y' }), '{"id":"x"}');
  });
});
