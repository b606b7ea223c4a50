// Route schemas compiled once per process. Fastify compiles every route's validators
// (Ajv) and serializers (fast-json-stringify) again for each app it builds; those are the
// same schemas every time, so a process that builds several apps (startTempInbox() in a
// test suite, the benches) paid the same few hundred milliseconds of CPU at each start.
// The compilers are Fastify's own defaults; what they return is kept here, keyed by the
// compiler's options, the part of the request or answer, and the schema's JSON.
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
// The published types describe the returned compiler loosely; this is what it is called with.
type BuildValidator = (...args: Parameters<AjvCompiler.BuildCompilerFromPool>) => (route: AjvCompiler.RouteDefinition) => unknown;
type BuildSerializer = SerializerSelector.SerializerFactory;

/** Schemas come from the code, so their number is bounded by the routes; this is a guard, not a working limit. */
const MAX_KEPT = 4096;

const validators = new Map<string, unknown>();
const serializers = new Map<string, unknown>();
const validatorFactory = AjvCompiler();
const serializerFactory = SerializerSelector();

function kept<T>(cache: Map<string, unknown>, key: string, compile: () => T): T {
  const hit = cache.get(key);
  if (hit !== undefined) return hit as T;
  const made = compile();
  if (cache.size < MAX_KEPT) cache.set(key, made);
  return made;
}

const buildValidator: BuildValidator = (externalSchemas, options) => {
  const compile = validatorFactory(externalSchemas, options) as unknown as (route: AjvCompiler.RouteDefinition) => unknown;
  const scope = `${JSON.stringify(externalSchemas)}\0${JSON.stringify(options)}`;
  return (route: AjvCompiler.RouteDefinition) => kept(validators, `${scope}\0${route.httpPart ?? ''}\0${JSON.stringify(route.schema)}`, () => compile(route));
};

const buildSerializer: BuildSerializer = (externalSchemas, options) => {
  const compile = serializerFactory(externalSchemas, options);
  const scope = `${JSON.stringify(externalSchemas)}\0${JSON.stringify(options)}`;
  return (route: SerializerSelector.RouteDefinition) => kept(serializers, `${scope}\0${JSON.stringify(route.schema)}`, () => compile(route));
};

/** Fastify's schemaController option: its default compilers, with what they compile kept for the process. */
export const cachedSchemaCompilers: FastifyServerOptions['schemaController'] = {
  // Fastify types buildValidator as a union with Ajv's JTD serializer factory; this is the plain validator one.
  compilersFactory: { buildValidator: buildValidator as unknown as NonNullable<Factories['buildValidator']>, buildSerializer },
};
