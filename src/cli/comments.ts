import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

interface ListedComment {
  id: string;
  parent: string | null;
  visibility: string;
  author: { username: string } | null;
  content: string | null;
  createdAt: string;
  deletedAt: string | null;
  replies?: ListedComment[];
}

/** One line of content for the table: the first line, shortened. */
function summary(content: string | null): string {
  if (content === null) return '(deleted)';
  const first = content.split('\n').find((l) => l.trim() !== '') ?? '';
  return first.length > 72 ? `${first.slice(0, 71)}…` : first;
}

/**
 * `vigil comments …` and `vigil notifications …`: comments on findings and the caller's
 * notifications over HTTP (`--url`, `--token` or VIGIL_URL, VIGIL_TOKEN), as that user.
 */
export function registerCommentCommands(program: Command, env: Env): void {
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const run = (cmd: Command, method: string, path: string, body?: unknown) =>
    callApi(opts(cmd), env, method, path, body);
  const findingPath = (repo: string, finding: string) =>
    `/api/v0/repositories/${encodeURIComponent(repo)}/findings/${encodeURIComponent(finding)}`;

  const comments = program
    .command('comments')
    .description('comment on findings and read their threads (as the token’s user)')
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--token <token>', 'user API token (default VIGIL_TOKEN)')
    .option('--json', 'print JSON instead of tables');

  comments
    .command('add <repository> <finding> [content]')
    .description('comment on a finding (id or number); @project and @username ping')
    .option('--file <path>', 'read the markdown content from a file instead')
    .option('--visibility <visibility>', 'public, private, internal or hidden', 'public')
    .option('--parent <commentId>', 'reply in this thread')
    .action(async (repo: string, finding: string, content: string | undefined, o, cmd: Command) => {
      const text = o.file ? await readFile(o.file, 'utf8') : content;
      if (text === undefined) throw new CliError('Give the content as an argument or with --file.');
      const body = { content: text, visibility: o.visibility, ...(o.parent ? { parent: o.parent } : {}) };
      printResult(await run(cmd, 'POST', `${findingPath(repo, finding)}/comment`, body), opts(cmd).json, [
        'id',
      ]);
    });

  comments
    .command('list <repository> <finding>')
    .description('the threads you may read, oldest first (marks them read)')
    .action(async (repo: string, finding: string, _o, cmd: Command) => {
      const result = (await run(cmd, 'GET', `${findingPath(repo, finding)}/comments`)) as {
        threads: ListedComment[];
      };
      if (opts(cmd).json) {
        printResult(result, true);
        return;
      }
      const rows = result.threads.flatMap((thread) => [thread, ...(thread.replies ?? [])]);
      printResult(
        rows.map((c) => ({
          id: c.id,
          reply: c.parent ? '↳' : '',
          visibility: c.visibility,
          author: c.author?.username ?? '',
          createdAt: c.createdAt,
          content: summary(c.deletedAt ? null : c.content),
        })),
        false,
        ['id', 'reply', 'visibility', 'author', 'createdAt', 'content'],
      );
    });

  comments
    .command('edit <repository> <finding> <commentId> <content>')
    .description('edit your own comment')
    .action(async (repo: string, finding: string, id: string, content: string, _o, cmd: Command) => {
      await run(cmd, 'PATCH', `${findingPath(repo, finding)}/comments/${encodeURIComponent(id)}`, {
        content,
      });
      printResult({ id, edited: true }, opts(cmd).json);
    });

  comments
    .command('delete <repository> <finding> <commentId>')
    .description('delete your own comment (admins: any); replies stay')
    .action(async (repo: string, finding: string, id: string, _o, cmd: Command) => {
      await run(cmd, 'DELETE', `${findingPath(repo, finding)}/comments/${encodeURIComponent(id)}`);
      printResult({ id, deleted: true }, opts(cmd).json);
    });

  const notifications = program
    .command('notifications')
    .description('your notifications (pings)')
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--token <token>', 'user API token (default VIGIL_TOKEN)')
    .option('--json', 'print JSON instead of tables');
  notifications
    .command('list')
    .option('--unread', 'only unread ones')
    .option('--limit <n>', 'page size', '20')
    .option('--next <cursor>', 'the nextValue of the previous page')
    .action(async (o, cmd: Command) => {
      const query = new URLSearchParams({ limit: String(o.limit) });
      if (o.unread) query.set('unread', 'true');
      if (o.next) query.set('next', o.next);
      const page = (await run(cmd, 'GET', `/api/v0/notifications?${query}`)) as {
        notifications: Array<{
          id: string;
          readAt: string | null;
          createdAt: string;
          payload: Record<string, unknown>;
        }>;
        nextValue: string | null;
      };
      if (opts(cmd).json) {
        printResult(page, true);
        return;
      }
      printResult(
        page.notifications.map((n) => ({
          id: n.id,
          read: n.readAt ? 'yes' : '',
          createdAt: n.createdAt,
          from: n.payload.authorUsername ?? '',
          finding: `${n.payload.repositoryName ?? ''} #${n.payload.findingNumber ?? ''}`,
          excerpt: summary(typeof n.payload.excerpt === 'string' ? n.payload.excerpt : ''),
        })),
        false,
        ['id', 'read', 'createdAt', 'from', 'finding', 'excerpt'],
      );
      if (page.nextValue) process.stdout.write(`next: ${page.nextValue}\n`);
    });
  notifications
    .command('read [notificationId]')
    .description('mark one notification read, or all of them without an id')
    .action(async (id: string | undefined, _o, cmd: Command) => {
      const result = id
        ? await run(cmd, 'PUT', `/api/v0/notifications/${encodeURIComponent(id)}/read`).then(() => ({
            id,
            read: true,
          }))
        : await run(cmd, 'PUT', '/api/v0/notifications/read');
      printResult(result, opts(cmd).json);
    });
}
