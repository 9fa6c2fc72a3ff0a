import type { FastifyReply } from 'fastify';

/**
 * Response bodies kept with the values they were made from. A read served from a process cache
 * (the company user lists) hands out the same object until the cache forgets it, so its JSON —
 * written by the route's own response serializer, from the route's schema — is made once and sent
 * as it is to every later request, instead of being serialized again each time. It is kept as
 * UTF-8 bytes, so that sending it copies them as they are instead of encoding the string again
 * for every request. Keyed weakly: a body goes when its value does.
 */
const bodies = new WeakMap<object, Buffer>();

/** Sends `body(value)` serialized by the route's 200 serializer, made once per `value` object. */
export function sendKeptBody<T extends object>(reply: FastifyReply, value: T, body: (value: T) => unknown) {
  let bytes = bodies.get(value);
  if (bytes === undefined) {
    const serialized = reply.serialize(body(value));
    bytes =
      typeof serialized === 'string'
        ? Buffer.from(serialized, 'utf8')
        : Buffer.isBuffer(serialized)
          ? serialized
          : Buffer.from(serialized);
    bodies.set(value, bytes);
  }
  return reply.type('application/json; charset=utf-8').send(bytes);
}
