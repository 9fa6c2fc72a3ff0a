/**
 * Response serializers compiled on first use instead of at start-up. Fastify compiles a
 * fast-json-stringify function for every response schema of every route when the app becomes
 * ready — about a third of the CPU a `vigil start` spends before it answers — although a process
 * serves a few of them most of the time. The compiled functions are the same; the first response
 * of each route and status pays for its own compilation (a few milliseconds).
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;

/** The `schemaController.compilersFactory.buildSerializer` of Fastify's default, made lazy. */
export const lazySerializers: NonNullable<CompilersFactory['buildSerializer']> = (
  externalSchemas,
  options,
) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compile(route);
      return serialize(data);
    };
  };
};
