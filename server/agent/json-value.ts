/** Any value that survives JSON.stringify/JSON.parse unchanged: what a task result may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
