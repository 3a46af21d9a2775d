"""The wire contract with the tables (ROUND_RECORD.md), below the API that serves it.

``contract`` states each field of the round record and its answer once; ``shapes`` makes
from it the fast reader, the serializers that word every refusal and the answer's writer;
``fields`` holds the wire's field kinds (amounts, moments, cards), ``json_body`` how a
body is read as JSON. The API, the stored round's proof and the other apps' serializers
import it from here; it imports no model.
"""
