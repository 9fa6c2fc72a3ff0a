import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, ref, UuidSchema } from '../../http/schemas.ts';

const Sha256Schema = Type.String({
  pattern: '^[A-Fa-f0-9]{64}$',
  description: 'Lowercase or uppercase hex SHA-256',
});

/** One archive the client means to upload. */
export const ArchiveDeclarationSchema = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'For the client’s own reference; never used as a path',
    }),
    sizeBytes: Type.Integer({
      minimum: 1,
      // A bigint column; the largest integer JSON numbers carry exactly.
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'Exact size of the tar.gz; it becomes the session’s maxBytes (at most the server’s upload limit)',
    }),
  },
  { additionalProperties: false },
);

/** CreateSourceUploadsRequest: a workspace by id, or by name and prefix, and 1 to 20 archives. */
export const CreateSourceUploadsRequestSchema = Type.Object(
  {
    workspaceId: Type.Optional(UuidSchema),
    workspace: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 200 }),
          prefix: Type.Optional(
            Type.String({ maxLength: 1024, description: 'Path within the source repository' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    archives: Type.Array(ArchiveDeclarationSchema, { minItems: 1, maxItems: 20 }),
  },
  {
    additionalProperties: false,
    $id: 'CreateSourceUploadsRequest',
    description:
      'Exactly one of workspaceId and workspace. A workspace given by name and prefix is reused when an active one exists, else created.',
  },
);
export type CreateSourceUploadsRequest = Static<typeof CreateSourceUploadsRequestSchema>;

/** One upload session: where and how to PUT one archive. */
export const SourceUploadSessionSchema = Type.Object(
  {
    uploadId: UuidSchema,
    filename: Type.String(),
    uploadUrl: Type.String({ description: 'Signed, expiring URL that takes a PUT of the tar.gz' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Headers to send with the PUT' }),
    expiresAt: DateTimeSchema,
    maxBytes: Type.Integer(),
  },
  { $id: 'SourceUploadSession' },
);
export type SourceUploadSession = Static<typeof SourceUploadSessionSchema>;

/** SourceUploadSessions: one session per declared archive, in order. */
export const SourceUploadSessionsSchema = Type.Object(
  { workspaceId: UuidSchema, uploads: Type.Array(ref(SourceUploadSessionSchema)) },
  { $id: 'SourceUploadSessions' },
);
export type SourceUploadSessions = Static<typeof SourceUploadSessionsSchema>;

/** CompleteSourceUploadRequest: the sha256 the client computed, compared when given. */
export const CompleteSourceUploadRequestSchema = Type.Object(
  { sha256: Type.Optional(Sha256Schema) },
  { additionalProperties: false, $id: 'CompleteSourceUploadRequest' },
);
export type CompleteSourceUploadRequest = Static<typeof CompleteSourceUploadRequestSchema>;

/** CompletedSourceUpload: the verified archive a local `scanSources` entry names. */
export const CompletedSourceUploadSchema = Type.Object(
  {
    archiveId: UuidSchema,
    uploadId: UuidSchema,
    workspaceId: UuidSchema,
    sha256: Type.String(),
    sizeBytes: Type.Integer(),
    fileCount: Type.Integer(),
    expandedBytes: Type.Integer(),
    createdAt: DateTimeSchema,
  },
  { $id: 'CompletedSourceUpload' },
);
export type CompletedSourceUpload = Static<typeof CompletedSourceUploadSchema>;

/** Path parameters of the completion route. */
export const UploadIdParamsSchema = Type.Object({ uploadId: UuidSchema });

/** Query of a signed upload URL of the embedded store. */
export const SignedUploadQuerySchema = Type.Object({
  expires: Type.Optional(Type.String()),
  maxBytes: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
});

/** What the embedded store's upload route answers after a PUT. */
export const ReceivedUploadSchema = Type.Object(
  {
    uploadId: UuidSchema,
    sizeBytes: Type.Integer(),
    status: Type.Literal('received'),
  },
  { $id: 'ReceivedUpload' },
);
export type ReceivedUpload = Static<typeof ReceivedUploadSchema>;
