// GraphQL over WebSocket at /graphql: graphql-ws's server (the graphql-transport-ws protocol) on Bun's
// own WebSocket server, running operations through the same Yoga (plugins, limits, error masking,
// context) as HTTP. The token comes in `connection_init`'s payload as { "Authorization": "Bearer …" };
// where SVC_GRAPHQL_AUTH needs one and it is missing or invalid, the socket closes with 4403.
import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import type { ExecutionArgs, GraphQLError } from "graphql";
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, handleProtocols, makeServer } from "graphql-ws";
import type { YogaServerInstance } from "graphql-yoga";
import type { Authenticator } from "../auth/authenticator.ts";
import type { GraphqlAuth } from "../config.ts";
import { AppError, invalidFields, problemResponse } from "../errors.ts";
import type { UserRecord } from "../db/store.ts";
import { clientAddress } from "../http/client-address.ts";
import type { Logger } from "../log.ts";
import type { GraphQLContext } from "./context.ts";
import type { ServerContext } from "./context.ts";

/** Bytes waiting to be sent to one socket past which its reader counts as too slow, and is dropped. */
const SEND_BUFFER_MAX = 1024 * 1024;

/** What each socket carries from its upgrade to its close. */
interface SocketData {
  address: string;
  viewer: UserRecord | null;
  authorization: string | null;
  /** Operations running on it: at shutdown it closes once they have sent their "complete". */
  active: number;
  onMessage?: (data: string) => Promise<void>;
  closed?: (code?: number, reason?: string) => Promise<void>;
}

interface RootValue {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

export interface GraphqlWebSocketDeps {
  yoga: YogaServerInstance<ServerContext, GraphQLContext>;
  authenticator: Authenticator;
  auth: GraphqlAuth;
  trustProxy: number;
  logger: Logger;
  onSlowReader: () => void;
}

export type GraphqlWebSocket = ReturnType<typeof graphqlWebSocket>;

export function graphqlWebSocket({
  yoga,
  authenticator,
  auth,
  trustProxy,
  logger,
  onSlowReader,
}: GraphqlWebSocketDeps) {
  const sockets = new Set<ServerWebSocket<SocketData>>();
  let stopping = false;
  const goAway = (socket: ServerWebSocket<SocketData>) => socket.close(1001, "svc is stopping");

  const server = makeServer<Record<string, unknown> | undefined, { socket: ServerWebSocket<SocketData> }>({
    async onConnect({ connectionParams, extra }) {
      const given = connectionParams?.Authorization ?? connectionParams?.authorization;
      const authorization = typeof given === "string" ? given : null;
      if (auth === "off" || (auth === "mutations" && authorization === null)) return true;
      try {
        const caller = await authenticator.authenticate(authorization);
        extra.socket.data.viewer = caller.user;
        extra.socket.data.authorization = authorization;
        return true;
      } catch {
        // graphql-ws closes with 4403 Forbidden.
        return false;
      }
    },
    async onSubscribe({ extra }, _id, payload) {
      const { authorization, address } = extra.socket.data;
      // The token is checked again for every operation: one revoked since the connection opened gets no further.
      let viewer = extra.socket.data.viewer;
      let tokenExpiresAt: number | null = null;
      if (viewer) {
        try {
          const caller = await authenticator.authenticate(authorization);
          viewer = caller.user;
          tokenExpiresAt = caller.token.exp * 1000;
        } catch {
          extra.socket.close(CloseCode.Forbidden, "Forbidden: the token is no longer valid");
          return [];
        }
      }
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        viewer,
        authorization,
        tokenExpiresAt,
        transport: "ws",
        // Ours, not the client's operation id: it goes into the logs.
        requestId: Bun.randomUUIDv7(),
        origin: { address, requestId: null },
        body: undefined,
        outcome: {},
      } as ServerContext & Record<string, unknown>);
      let document;
      try {
        document = parse(payload.query);
      } catch (error) {
        return [error as GraphQLError];
      }
      const errors = validate(schema, document);
      if (errors.length > 0) return errors;
      const rootValue: RootValue = { execute, subscribe };
      // It runs from here on, until onComplete.
      extra.socket.data.active++;
      return {
        schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: await contextFactory(),
        rootValue,
      };
    },
    onComplete({ extra }) {
      // Counted down once graphql-ws has sent "complete", which it does after this returns: a timer
      // runs after the promise jobs that send it.
      setTimeout(() => {
        extra.socket.data.active--;
        if (stopping && extra.socket.data.active <= 0) goAway(extra.socket);
      }, 0);
    },
    execute: (args) => (args.rootValue as RootValue).execute(args) as never,
    subscribe: (args) => (args.rootValue as RootValue).subscribe(args) as never,
    // Yoga's HTTP answers drop `extensions.http` (a status for HTTP's sake); a socket has no status.
    onNext(_ctx, _id, _payload, _args, result) {
      if (!result.errors?.length) return;
      return {
        ...result,
        errors: result.errors.map((error) => {
          const { http: _http, ...extensions } = error.extensions ?? {};
          return { ...error.toJSON(), extensions };
        }),
      };
    },
  });

  const handler: WebSocketHandler<SocketData> = {
    open(socket) {
      sockets.add(socket);
      socket.data.closed = server.opened(
        {
          protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL,
          send(data) {
            if (socket.readyState !== WebSocket.OPEN) return;
            // A reader this far behind cannot keep up; nobody else waits for it.
            if (socket.getBufferedAmount() > SEND_BUFFER_MAX) {
              onSlowReader();
              logger.warn(
                { address: socket.data.address },
                "WebSocket subscriber dropped: it reads slower than categories change",
              );
              socket.close(CloseCode.InternalServerError, "Too slow a reader");
              return;
            }
            socket.send(data);
          },
          close(code, reason) {
            socket.close(code, reason);
          },
          onMessage(callback) {
            socket.data.onMessage = callback;
          },
        },
        { socket },
      );
    },
    message(socket, message) {
      const onMessage = socket.data.onMessage;
      if (!onMessage) return;
      onMessage(typeof message === "string" ? message : new TextDecoder().decode(message)).catch((error: unknown) => {
        logger.warn({ err: error }, "WebSocket message failed");
        socket.close(CloseCode.InternalServerError, "Internal error");
      });
    },
    close(socket, code, reason) {
      sockets.delete(socket);
      void socket.data.closed?.(code, reason);
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
      for (let waited = 0; sockets.size > 0 && waited < 1000; waited += 20) await Bun.sleep(20);
      for (const socket of sockets) goAway(socket);
    },
  };
}
