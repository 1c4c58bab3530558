// The fields of a Category every operation of the client asks for, as one GraphQL fragment.
const FIELDS = "id name description colorHex icon createdBy createdAt updatedAt version";
export const CATEGORY = `fragment Category on Category { ${FIELDS} }`;
