import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServiceActor } from '../../auth/actor.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../../http/app-type.ts';
import { v1Errors } from '../../http/schemas.ts';
import {
  CompletedSourceUploadSchema,
  CompleteSourceUploadRequestSchema,
  CreateSourceUploadsRequestSchema,
  ReceivedUploadSchema,
  SignedUploadQuerySchema,
  SourceUploadSessionsSchema,
  UploadIdParamsSchema,
} from './uploads.schemas.ts';
import type { UploadsService } from './uploads.service.ts';

/** Content types the upload route takes as a raw tar.gz stream (a missing type is accepted too). */
const UPLOAD_CONTENT_TYPES: ReadonlySet<string> = new Set([
  'application/gzip',
  'application/x-gzip',
  'application/octet-stream',
]);

/** createSourceUploads, completeSourceUpload, and the embedded store's signed `PUT /uploads/{uploadId}`. */
export async function registerUploadRoutes(app: App, uploads: UploadsService): Promise<void> {
  app.post(
    '/api/scanner/v1/source-uploads',
    {
      schema: {
        operationId: 'createSourceUploads',
        tags: ['source-uploads'],
        summary: 'Create or reuse a workspace and open one upload session per archive',
        security: [{ ServiceBearer: [] }, { ServiceApiKey: [] }],
        body: CreateSourceUploadsRequestSchema,
        response: { 200: SourceUploadSessionsSchema, ...v1Errors(404) },
      },
      config: { auth: { kind: 'service', scope: 'scans:create' } },
    },
    async (request) =>
      uploads.createSourceUploads(
        (request.actor as ServiceActor).organizationId,
        request.body,
        `${request.protocol}://${request.host}`,
      ),
  );

  app.post(
    '/api/scanner/v1/source-uploads/:uploadId/complete',
    {
      schema: {
        operationId: 'completeSourceUpload',
        tags: ['source-uploads'],
        summary: 'Verify an uploaded archive and return its archiveId and sha256',
        security: [{ ServiceBearer: [] }, { ServiceApiKey: [] }],
        params: UploadIdParamsSchema,
        body: CompleteSourceUploadRequestSchema,
        response: { 200: CompletedSourceUploadSchema, ...v1Errors(404, 409, 410, 413) },
      },
      config: { auth: { kind: 'service', scope: 'scans:create' } },
      // The body is optional: a completion without one (no sha256 to compare) is the common call.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) =>
      uploads.completeSourceUpload(
        (request.actor as ServiceActor).organizationId,
        request.params.uploadId,
        request.body,
      ),
  );

  // Encapsulated: the raw-stream body parser applies to this route only.
  await app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    // Leaves the body unread: the handler streams it to the object store without buffering.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.put(
      '/uploads/:uploadId',
      {
        schema: {
          operationId: 'putSourceUpload',
          tags: ['source-uploads'],
          summary:
            'Upload address of the embedded store: takes a PUT of one tar.gz; the URL’s signature is the credential',
          security: [],
          params: Type.Object({ uploadId: Type.String({ maxLength: 64 }) }),
          querystring: SignedUploadQuerySchema,
          response: { 200: ReceivedUploadSchema, ...v1Errors(404, 409, 413, 415) },
        },
        config: { auth: { kind: 'none' } },
      },
      async (request, reply) => {
        const { uploadId } = request.params;
        const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
        const length = request.headers['content-length'];
        // The body goes through a pass-through so that a refused upload does not destroy the
        // socket before the error response is written.
        const body = new PassThrough();
        try {
          if (type !== undefined && type !== '' && !UPLOAD_CONTENT_TYPES.has(type)) {
            throw new AppError('UNSUPPORTED_MEDIA_TYPE', {
              message:
                'Send the archive as application/gzip, application/x-gzip or application/octet-stream.',
            });
          }
          request.raw.pipe(body);
          return await uploads.receiveUpload(
            uploadId,
            request.query,
            body,
            length === undefined ? undefined : Number(length),
            request.ip,
          );
        } catch (err) {
          request.raw.unpipe(body);
          if (!request.raw.complete) {
            // The rest of the body is not wanted: answer first, then drop the connection rather
            // than read up to gigabytes only to discard them.
            reply.header('connection', 'close');
            reply.raw.once('finish', () => request.raw.destroy());
          }
          throw err;
        }
      },
    );
  });
}
