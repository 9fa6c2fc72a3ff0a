import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';

/** Longest question in characters. */
export const MAX_PROMPT_CHARS = 4000;
/** Largest `metadata` object, in bytes of JSON. */
export const MAX_METADATA_BYTES = 4096;

/** Body of `POST …/ai/ask` (v0 §4.1). */
export const AskAiSchema = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS, description: 'The question' }),
    conversationId: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'Conversation to continue or start (chosen by the client); without it the question starts a conversation of its own',
      }),
    ),
    metadata: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'Stored with the question; at most 4 KiB' }),
    ),
  },
  { $id: 'AskAi', additionalProperties: false },
);
export type AskAi = Static<typeof AskAiSchema>;

/** The answer: a JSON string (v0 §4.1). */
export const AiAnswerSchema = Type.String({
  $id: 'AiAnswer',
  description: 'The answer, citing findings as #N and files by path',
});

export const AiStatusSchema = Type.Object(
  {
    available: Type.Boolean({ description: 'Whether a question would be answered now' }),
    mode: Type.Union([Type.Literal('model'), Type.Literal('retrieval')], {
      description: 'model: answers written by the language model; retrieval: the most relevant items, listed',
    }),
    model: Nullable(Type.String()),
    reason: Nullable(Type.String({ description: 'Why the assistant is unavailable or limited' })),
  },
  { $id: 'AiStatus' },
);
export type AiStatus = Static<typeof AiStatusSchema>;

export const AiCitationsSchema = Type.Object(
  {
    findings: Type.Array(Type.Integer()),
    paths: Type.Array(Type.String()),
    unverified: Type.Array(Type.String()),
  },
  { $id: 'AiCitations' },
);

export const AiMessageSchema = Type.Object(
  {
    id: UuidSchema,
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String(),
    createdAt: DateTimeSchema,
    metadata: Type.Object({}, { additionalProperties: true }),
    citations: Nullable(ref(AiCitationsSchema)),
  },
  { $id: 'AiMessage' },
);

export const AiConversationSchema = Type.Object(
  {
    id: UuidSchema,
    repositoryId: UuidSchema,
    createdAt: DateTimeSchema,
    messages: Type.Array(ref(AiMessageSchema)),
  },
  { $id: 'AiConversation' },
);
export type AiConversation = Static<typeof AiConversationSchema>;
