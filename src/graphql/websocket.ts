// GraphQL over WebSocket at /graphql: graphql-ws's own Bun adapter (the graphql-transport-ws protocol),
// running operations on the same schema and plugins (limits, error masking, metrics) as HTTP, with a
// context of its own. The token comes in `connection_init`'s payload as { "Authorization": "Bearer …" };
// where SVC_GRAPHQL_AUTH needs one and it is missing or invalid, the socket closes with 4403.
import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import type { GetEnvelopedFn } from "@envelop/core";
import type { GraphQLError } from "graphql";
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL } from "graphql-ws";
import { handleProtocols, makeHandler } from "graphql-ws/use/bun";
import type { Authenticator } from "../auth/authenticator.ts";
import type { GraphqlAuth } from "../config/index.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError, invalidFields, problemResponse } from "../errors/index.ts";
import { clientAddress } from "../http/client-address.ts";
import type { Logger } from "../observability/log.ts";
import type { Caller, GraphQLContext } from "./context.ts";

/** Bytes waiting to be sent to one socket past which its reader counts as too slow, and is dropped. */
const SEND_BUFFER_MAX = 1024 * 1024;

/** What each socket carries from its upgrade to its close. */
interface SocketData {
  address: string;
  viewer: UserRecord | null;
  authorization: string | null;
  /** Operations running on it: at shutdown it closes once they have sent their "complete". */
  active: number;
}

type Socket = ServerWebSocket<SocketData>;

/** The adapter's socket, which carries what upgrade() gave it (the adapter types its data as nothing). */
const adapterSocket = (extra: { socket: ServerWebSocket }) => extra.socket as unknown as Socket;

export interface GraphqlWebSocketDeps {
  enveloped: GetEnvelopedFn<unknown>;
  contextFor: (caller: Caller) => GraphQLContext;
  authenticator: Authenticator;
  auth: GraphqlAuth;
  trustProxy: number;
  logger: Logger;
  onSlowReader: () => void;
}

export function graphqlWebSocket(deps: GraphqlWebSocketDeps) {
  const { enveloped, contextFor, authenticator, auth, trustProxy, logger, onSlowReader } = deps;
  const sockets = new Set<Socket>();
  let stopping = false;
  const goAway = (socket: Socket) => socket.close(1001, "svc is stopping");
  // Once for every operation: no plugin keeps anything by the context these are made for.
  const { schema, execute, subscribe, parse, validate } = enveloped();

  const graphqlWs = makeHandler<Record<string, unknown> | undefined>({
    async onConnect({ connectionParams, extra }) {
      const socket = adapterSocket(extra);
      const given = connectionParams?.Authorization ?? connectionParams?.authorization;
      const authorization = typeof given === "string" ? given : null;
      if (auth === "off" || (auth === "mutations" && authorization === null)) return true;
      try {
        const caller = await authenticator.authenticate(authorization);
        socket.data.viewer = caller.user;
        socket.data.authorization = authorization;
        return true;
      } catch {
        // graphql-ws closes with 4403 Forbidden.
        return false;
      }
    },
    async onSubscribe({ extra }, _id, payload) {
      const socket = adapterSocket(extra);
      const { authorization, address } = socket.data;
      // The token is checked again for every operation: one revoked since the connection opened gets no further.
      let viewer = socket.data.viewer;
      let tokenExpiresAt: number | null = null;
      if (viewer) {
        try {
          const caller = await authenticator.authenticate(authorization);
          viewer = caller.user;
          tokenExpiresAt = caller.token.exp * 1000;
        } catch {
          socket.close(CloseCode.Forbidden, "Forbidden: the token is no longer valid");
          return [];
        }
      }
      let document;
      try {
        document = parse(payload.query);
      } catch (error) {
        return [error as GraphQLError];
      }
      const errors = validate(schema, document);
      if (errors.length > 0) return errors;
      // Ours, not the client's operation id: it goes into the logs.
      const requestId = Bun.randomUUIDv7();
      const origin = { address, requestId: null };
      const caller = { viewer, authorization, tokenExpiresAt, transport: "ws", requestId, origin } as const;
      // It runs from here on, until onComplete.
      socket.data.active++;
      return {
        schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: contextFor({ ...caller, resumeAfter: null, outcome: {} }),
      };
    },
    onComplete({ extra }) {
      const socket = adapterSocket(extra);
      // Counted down once graphql-ws has sent "complete", which it does after this returns: a timer
      // runs after the promise jobs that send it.
      setTimeout(() => {
        socket.data.active--;
        if (stopping && socket.data.active <= 0) goAway(socket);
      }, 0);
    },
    execute: (args) => execute(args) as never,
    subscribe: (args) => subscribe(args) as never,
    onNext({ extra }, _id, _payload, _args, result) {
      // A reader this far behind cannot keep up; nobody else waits for it (the adapter sends without looking).
      const socket = adapterSocket(extra);
      if (socket.getBufferedAmount() > SEND_BUFFER_MAX) {
        onSlowReader();
        logger.warn(
          { address: socket.data.address },
          "WebSocket subscriber dropped: it reads slower than categories change",
        );
        socket.close(CloseCode.InternalServerError, "Too slow a reader");
        return;
      }
      // Yoga's HTTP answers drop `extensions.http` (a status for HTTP's sake); a socket has no status.
      if (!result.errors?.length) return;
      return {
        ...result,
        errors: result.errors.map((error) => {
          const { http: _http, ...extensions } = error.extensions ?? {};
          return { ...error.toJSON(), extensions };
        }),
      };
    },
  }) as WebSocketHandler<SocketData>;

  const handler: WebSocketHandler<SocketData> = {
    open(socket) {
      sockets.add(socket);
      graphqlWs.open?.(socket);
    },
    message(socket, message) {
      // The adapter hands back the message's promise, which Bun would leave unhandled.
      Promise.resolve(graphqlWs.message!(socket, message)).catch((error: unknown) => {
        logger.warn({ err: error }, "WebSocket message failed");
        socket.close(CloseCode.InternalServerError, "Internal error");
      });
    },
    close(socket, code, reason) {
      sockets.delete(socket);
      void graphqlWs.close?.(socket, code, reason);
    },
  };

  return {
    handler,
    /**
     * Upgrades a GraphQL WebSocket handshake; null when the request is not one. A handshake that does
     * not offer graphql-transport-ws is refused (400).
     */
    upgrade(request: Request, bunServer: Server<unknown>): Response | undefined | null {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
      const protocol = handleProtocols(request.headers.get("sec-websocket-protocol") ?? "");
      if (!protocol) {
        return problemResponse(
          invalidFields([{ field: "Sec-WebSocket-Protocol", message: `must offer ${GRAPHQL_TRANSPORT_WS_PROTOCOL}` }]),
        );
      }
      const data: SocketData = {
        address: clientAddress(request, trustProxy),
        viewer: null,
        authorization: null,
        active: 0,
      };
      const upgraded = (bunServer as Server<SocketData>).upgrade(request, {
        data,
        headers: { "sec-websocket-protocol": protocol },
      });
      return upgraded
        ? undefined
        : problemResponse(new AppError("validation_failed", "The WebSocket handshake could not be completed."));
    },
    /**
     * Closes every socket as going away (1001), each once its operations have completed (the hub ends
     * the subscriptions first), and every one within a second: for shutdown.
     */
    async closeAll() {
      stopping = true;
      for (const socket of sockets) if (socket.data.active <= 0) goAway(socket);
      for (let waited = 0; waited < 1000 && sockets.size > 0; waited += 20) await Bun.sleep(20);
      for (const socket of sockets) goAway(socket);
    },
  };
}
