import type { ServiceActor } from '../../auth/actor.ts';
import type { App } from '../../http/app-type.ts';
import { ref, v1Errors } from '../../http/schemas.ts';
import { WorkspaceIdParamsSchema } from '../drafts/drafts.schemas.ts';
import {
  ListWorkspacesQuerySchema,
  ScannerWorkspaceListSchema,
  ScannerWorkspaceSchema,
} from './workspaces.schemas.ts';
import type { ScannerWorkspacesService } from './workspaces.service.ts';

const security: Array<Record<string, string[]>> = [{ ServiceBearer: [] }, { ServiceApiKey: [] }];
const tags = ['workspaces', 'extension'];

/**
 * listWorkspaces and getWorkspace (extension, ADR 0018): the names, prefixes and linked
 * repositories behind the workspace ids that scans and drafts carry.
 */
export function registerScannerWorkspaceRoutes(app: App, workspaces: ScannerWorkspacesService): void {
  app.get(
    '/api/scanner/v1/workspaces',
    {
      schema: {
        operationId: 'listWorkspaces',
        tags,
        summary: 'The organization’s workspaces, newest first (cursor pages)',
        description:
          'Unlinked workspaces (`active: false`) are listed too: their scans keep their workspace id.',
        security,
        querystring: ListWorkspacesQuerySchema,
        response: { 200: ScannerWorkspaceListSchema, ...v1Errors(400, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) => workspaces.listWorkspaces(request.actor as ServiceActor, request.query),
  );

  app.get(
    '/api/scanner/v1/workspaces/:workspaceId',
    {
      schema: {
        operationId: 'getWorkspace',
        tags,
        summary: 'One workspace of the organization: name, prefix, linked repository',
        security,
        params: WorkspaceIdParamsSchema,
        response: { 200: ref(ScannerWorkspaceSchema), ...v1Errors(404, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) => workspaces.getWorkspace(request.actor as ServiceActor, request.params.workspaceId),
  );
}
