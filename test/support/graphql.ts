// What the GraphQL tests share (test/api/graphql*.test.ts): the category operations, an app with an owner
// signed up, and the one error of a reply.
import { expect } from "bun:test";
import { testApp } from "../helpers.ts";

export const CREATE = `mutation Create($input: CreateCategoryInput!) {
  createCategory(input: $input) { id name description colorHex icon createdAt updatedAt }
}`;
export const UPDATE = `mutation Update($id: ID!, $input: UpdateCategoryInput!) {
  updateCategory(id: $id, input: $input) { id name description colorHex icon }
}`;
export const DELETE = "mutation Delete($id: ID!) { deleteCategory(id: $id) }";
export const LIST = "{ categories { id name description colorHex icon } }";

export async function setup(config: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp(config);
  const owner = await app.signUp("owner");
  const create = async (input: Record<string, unknown>, token = owner.token) =>
    app.graphql(CREATE, { variables: { input }, token });
  return { ...app, owner, create };
}

export function errorOf(reply: {
  body: { errors?: Array<{ extensions?: Record<string, unknown>; message: string }> };
}) {
  expect(reply.body.errors).toHaveLength(1);
  return reply.body.errors![0]!;
}
