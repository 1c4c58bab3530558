// drizzle-kit settings for the PostgreSQL migrations (`bun run db:generate`).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/postgres/schema.ts",
  out: "./drizzle/postgres",
});
