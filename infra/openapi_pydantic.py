"""Answers declared as pydantic models, in the OpenAPI 3.0 schema the API publishes.

drf-spectacular's own pydantic extension writes pydantic's JSON Schema, which
is of OpenAPI 3.1 (``"type": "null"`` in a union, ``prefixItems`` for a
tuple); the schema is 3.0 (docs/openapi.yaml), so an optional value is
written ``nullable`` and a tuple as an array of its item types. Loaded with
``infra.openapi``, which every API module imports.
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from pydantic.json_schema import GenerateJsonSchema, model_json_schema


class OpenApi30(GenerateJsonSchema):
    def nullable_schema(self, schema):
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def tuple_schema(self, schema):
        items = [self.generate_inner(item) for item in schema["items_schema"]]
        distinct = [item for i, item in enumerate(items) if item not in items[:i]]
        return {"type": "array", "items": distinct[0] if len(distinct) == 1 else {"oneOf": distinct},
                "minItems": len(items), "maxItems": len(items)}


class PydanticModels(OpenApiSerializerExtension):
    target_class = "pydantic.BaseModel"
    match_subclasses = True
    priority = 1  # before drf-spectacular's own, which writes 3.1

    def get_name(self, auto_schema, direction):
        return self.target.__name__

    def map_serializer(self, auto_schema, direction):
        schema = model_json_schema(self.target, ref_template="#/components/schemas/{model}", mode="serialization",
                                   schema_generator=OpenApi30)
        for name, part in schema.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(
                ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=part))
        return schema
