// `svc invitation create|list|revoke`: invitations on the box, through the same service as the admin API,
// on whatever database SVC_DATABASE_URL names, while svc may be serving from it.
import { withServices, options, type CommandIo } from "../admin/cli.ts";
import { CLI_ORIGIN } from "../audit/model.ts";
import { INVITATION_TTL_BOUNDS, parseDuration, type Config } from "../config/index.ts";
import { UsageError } from "../errors/index.ts";
import { EXPIRES_IN_MESSAGE } from "./model.ts";

/** Invitations read per page when listing them all. */
const PAGE = 1000;

export async function invitationCommand(args: string[], config: Config, io: CommandIo): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case "create": {
      const { values } = options(rest, { email: { type: "string" }, expires: { type: "string" } });
      const seconds = values.expires === undefined ? config.signup.invitationTtlSeconds : parseDuration(values.expires);
      const { min, max } = INVITATION_TTL_BOUNDS;
      if (seconds === null || seconds < min || seconds > max) throw new UsageError(`--expires ${EXPIRES_IN_MESSAGE}`);
      return withServices("invitation", config, io, async (_, { invitations }) => {
        const input = { ...(values.email !== undefined && { email: values.email }), expires_in: `${seconds}s` };
        const issued = await invitations.issue(null, input, CLI_ORIGIN);
        const forWhom = issued.email ?? "any e-mail address";
        io.out.write(
          `invitation code: ${issued.code}\nid ${issued.id}, for ${forWhom}, expires ${issued.expires_at}; it works once, sent as "invitation" to POST /svc-api/v1/users/create\n`,
        );
        return 0;
      });
    }
    case "list": {
      options(rest, {});
      return withServices("invitation", config, io, async (_, { invitations }) => {
        io.out.write(`${["id", "email", "created by", "created", "expires", "used", "used by"].join("\t")}\n`);
        for (let before: string | undefined; ; ) {
          const page = await invitations.list({ limit: PAGE, ...(before && { before }) });
          for (const i of page) {
            const row = [i.id, i.email ?? "any", i.createdBy ?? "cli", i.createdAt, i.expiresAt];
            io.out.write(`${[...row, i.usedAt ?? "-", i.usedBy ?? "-"].join("\t")}\n`);
          }
          if (page.length < PAGE) return 0;
          before = page.at(-1)!.id;
        }
      });
    }
    case "revoke": {
      const { positionals } = options(rest, {}, 1, "invitation id");
      return withServices("invitation", config, io, async (_, { invitations }) => {
        await invitations.revoke(null, positionals[0]!, CLI_ORIGIN);
        io.out.write(`revoked invitation ${positionals[0]}\n`);
        return 0;
      });
    }
    default:
      throw new UsageError(verb ? `unknown invitation command ${JSON.stringify(verb)}` : "say what to do");
  }
}
