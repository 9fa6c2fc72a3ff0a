import type { Command } from 'commander';
import { isUuid } from '../strings.ts';
import { CliError, callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

/**
 * `vigil ai …`: asks the repository assistant of a running server (`POST …/ai/ask`), shows its
 * status and a conversation, as the user whose token is given.
 */
export function registerAiCommands(program: Command, env: Env): Command {
  const ai = program
    .command('ai')
    .description('the repository assistant of a running server')
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--token <token>', 'user API token (default VIGIL_TOKEN)')
    .option('--json', 'print JSON');
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const repoPath = (repo: string) => {
    if (!isUuid(repo)) throw new CliError(`The repository must be a UUID; got "${repo}".`);
    return `/api/v0/repositories/${repo}/ai`;
  };

  ai.command('ask <repository> <question...>')
    .description('ask a question about a repository; the answer cites findings (#12) and files')
    .option('--conversation <uuid>', 'continue (or start) this conversation')
    .action(async (repo: string, words: string[], o: { conversation?: string }, cmd: Command) => {
      if (o.conversation !== undefined && !isUuid(o.conversation)) {
        throw new CliError(`--conversation must be a UUID; got "${o.conversation}".`);
      }
      const answer = await callApi(opts(cmd), env, 'POST', `${repoPath(repo)}/ask`, {
        prompt: words.join(' '),
        ...(o.conversation ? { conversationId: o.conversation } : {}),
      });
      if (opts(cmd).json) printResult({ answer, conversationId: o.conversation ?? null }, true);
      else process.stdout.write(`${String(answer)}\n`);
    });

  ai.command('status <repository>')
    .description('whether the assistant is available on the repository, and on which model')
    .action(async (repo: string, _o, cmd: Command) => {
      printResult(await callApi(opts(cmd), env, 'GET', `${repoPath(repo)}/status`), opts(cmd).json, [
        'available',
        'mode',
        'model',
        'reason',
      ]);
    });

  ai.command('conversation <repository> <conversation>')
    .description('one of your conversations with the assistant')
    .action(async (repo: string, conversation: string, _o, cmd: Command) => {
      const value = (await callApi(
        opts(cmd),
        env,
        'GET',
        `${repoPath(repo)}/conversations/${encodeURIComponent(conversation)}`,
      )) as { messages: Array<{ role: string; content: string }> };
      if (opts(cmd).json) printResult(value, true);
      else for (const m of value.messages) process.stdout.write(`${m.role}: ${m.content}\n\n`);
    });
  return ai;
}
