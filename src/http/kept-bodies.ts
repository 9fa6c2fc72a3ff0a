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
  return sendKeptJson(reply, value, (v) => reply.serialize(body(v)));
}

/**
 * Sends the JSON text `json(value)` as it is, made once per `value` object: for answers whose
 * text is written from the route's schema elsewhere (a page of findings, written by PostgreSQL).
 */
export function sendKeptJson<T extends object>(
  reply: FastifyReply,
  value: T,
  json: (value: T) => string | Buffer | Uint8Array | ArrayBuffer,
) {
  let bytes = bodies.get(value);
  if (bytes === undefined) {
    const text = json(value);
    bytes =
      typeof text === 'string'
        ? Buffer.from(text, 'utf8')
        : Buffer.isBuffer(text)
          ? text
          : Buffer.from(text instanceof ArrayBuffer ? new Uint8Array(text) : text);
    bodies.set(value, bytes);
  }
  return reply.type('application/json; charset=utf-8').send(bytes);
}
