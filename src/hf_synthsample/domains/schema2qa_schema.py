"""The six schema.org domains of Schema2QA: tables, properties, canonical phrases, value lists.

Properties and types are those the annotated Schema2QA data uses (plus a few of the same tables).
Each property has a category that fixes its operators, values and phrasings:

``id`` (=~ on the name), ``str`` (=~), ``ent`` (== on an entity), ``arr_ent`` (contains),
``arr_str`` (contains~), ``num`` (== >= <=), ``bool`` (== true/false), ``enum`` (==), ``loc``
(== location), ``date`` (>= <=, a year range, relative dates), ``time`` (== >= <=), ``dur``
(>= <= on a Measure(ms)), ``open`` (contains on opening hours), ``proj`` (projection only).

Phrases are ``str.format`` templates: ``{v}`` the value, ``{np}`` the property's noun phrase,
``{unit}`` the counted noun of a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Prop", "Table", "DOMAINS", "VALUES", "CATEGORY_PHRASES"]


@dataclass(frozen=True)
class Prop:
    name: str
    type: str
    cat: str
    np: str
    values: str = ""  # key into VALUES (ent/str/arr/id/loc categories)
    unit: str = ""  # counted noun for numbers ("stars", "reviews")
    phrases: dict = field(default_factory=dict)  # op -> phrases overriding CATEGORY_PHRASES

    @property
    def entity_type(self) -> str:
        t = self.type
        if t.startswith("Array("):
            t = t[6:-1]
        return t[7:-1] if t.startswith("Entity(") else ""


@dataclass(frozen=True)
class Table:
    name: str  # @org.schema.Hotel.Hotel
    singular: str
    plural: str
    props: tuple
    verb: str = "published"  # date phrases: "published in NUMBER_0"

    def prop(self, name: str) -> Prop:
        for p in self.props:
            if p.name == name:
                return p
        raise KeyError(name)


VALUES: dict[str, tuple[str, ...]] = {
    "city": ("seattle", "chicago", "new york", "san francisco", "los angeles", "miami", "dallas", "boston", "houston", "palo alto"),
    "cuisine": ("italian", "chinese", "mexican", "thai", "french", "indian", "japanese", "fast food", "pizza", "vegan"),
    "restaurant": ("olive garden", "pizza hut", "wendy 's", "starbucks", "panda express", "chipotle", "in-n-out", "shake shack"),
    "hotel": ("hilton", "marriott", "holiday inn", "sheraton", "motel 6", "hyatt", "red roof inn", "best western"),
    "amenity": ("free parking", "free breakfast", "free wi-fi", "pool", "fitness center", "hot tub", "restaurant", "airport shuttle"),
    "person": ("bill gates", "taylor swift", "barack obama", "jeff bezos", "oprah winfrey", "elon musk", "serena williams", "tom hanks"),
    "org": ("google", "amazon", "microsoft", "apple", "facebook", "harvard", "stanford", "mit", "yale", "ibm"),
    "language": ("english", "spanish", "french", "german", "chinese", "italian", "japanese", "russian"),
    "award": ("pulitzer prize", "nobel prize", "oscar", "emmy", "grammy", "hugo award", "booker prize", "newbery medal"),
    "job": ("ceo", "professor", "software engineer", "doctor", "lawyer", "president", "artist", "teacher"),
    "author": ("stephen king", "jane austen", "ernest hemingway", "j. k. rowling", "george orwell", "toni morrison", "mark twain"),
    "book": ("war and peace", "the great gatsby", "harry potter", "to kill a mockingbird", "moby dick", "animal farm", "dune"),
    "edition": ("first edition", "2nd edition", "special edition", "anniversary edition"),
    "movie": ("titanic", "star wars", "jaws", "the godfather", "inception", "frozen", "the matrix", "casablanca"),
    "actor": ("tom hanks", "brad pitt", "meryl streep", "leonardo dicaprio", "scarlett johansson", "denzel washington"),
    "director": ("steven spielberg", "james cameron", "christopher nolan", "martin scorsese", "greta gerwig", "clint eastwood"),
    "genre": ("comedy", "horror", "drama", "action", "science fiction", "romance", "documentary", "thriller"),
    "music_genre": ("pop", "rock", "jazz", "hip hop", "country", "classical", "metal", "blues"),
    "content_rating": ("g", "pg", "pg-13", "r"),
    "keyword": ("time travel", "robots", "wall street", "friendship", "space", "zombies"),
    "song": ("billie jean", "hey jude", "bad guy", "yesterday", "hotel california", "shape of you", "dark horse"),
    "album": ("thriller", "abbey road", "nevermind", "1989", "back in black", "rumours", "lemonade"),
    "artist": ("the beatles", "taylor swift", "madonna", "eminem", "beyonce", "queen", "adele", "drake"),
    "reviewer": ("john smith", "alex smith", "maria garcia", "david lee", "emily chen"),
    "state": ("texas", "california", "new york", "florida", "ohio"),
    "postal": ("98105", "60606", "10001", "94301"),
}

# op -> phrases, per category (a property's own phrases take precedence)
CATEGORY_PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "id": {"=~": ("named {v}", "called {v}", "with the name {v}", "whose name is {v}")},
    "str": {"=~": ("with {np} {v}", "whose {np} is {v}", "with {v} as {np}", "with {np} like {v}")},
    "ent": {"==": ("with {np} {v}", "whose {np} is {v}", "with {v} as {np}", "that have {v} as {np}")},
    "arr_ent": {"contains": ("with {np} {v}", "whose {np} include {v}", "that have {v} as {np}", "with {v} among their {np}")},
    "arr_str": {"contains~": ("with {np} {v}", "that have {v} in their {np}", "whose {np} include {v}", "with a {v} {np}")},
    "num": {
        "==": ("with {v} {unit}", "with {np} {v}", "whose {np} is exactly {v}", "with {np} equal to {v}"),
        ">=": ("with at least {v} {unit}", "with {np} at least {v}", "whose {np} is {v} or more", "with more than {v} {unit}", "with {np} above {v}"),
        "<=": ("with at most {v} {unit}", "with {np} at most {v}", "whose {np} is {v} or less", "with fewer than {v} {unit}", "with {np} below {v}"),
    },
    "enum": {"==": ("with {np} {v}", "that are {v}", "whose {np} is {v}")},
    "loc": {"==": ("in {v}", "located in {v}", "around {v}", "near {v}")},
    "time": {
        "==": ("with {np} at {v}", "whose {np} is {v}"),
        ">=": ("with {np} after {v}", "whose {np} is later than {v}"),
        "<=": ("with {np} before {v}", "whose {np} is earlier than {v}"),
    },
    "dur": {
        ">=": ("longer than {v}", "that last at least {v}", "with {np} over {v}"),
        "<=": ("shorter than {v}", "that last at most {v}", "with {np} under {v}"),
    },
    "open": {"contains": ("open at {v}", "that are open at {v}", "with {np} including {v}")},
}

# properties shared by several tables
_RATING = Prop("aggregateRating.ratingValue", "Number", "num", "rating", unit="stars",
               phrases={"==": ("with {v} {unit}", "rated {v} {unit}", "with a {v} star rating")})
_REVIEWS = Prop("aggregateRating.reviewCount", "Number", "num", "number of reviews", unit="reviews")
_DATE = Prop("datePublished", "Date", "date", "date")
_TELEPHONE = Prop("telephone", "Entity(tt:phone_number)", "proj", "phone number")
_GEO = Prop("geo", "Location", "loc", "location", "city")


RESTAURANT = Table(
    "@org.schema.Restaurant.Restaurant", "restaurant", "restaurants",
    (
        Prop("id", "Entity(org.schema.Restaurant:Restaurant)", "id", "name", "restaurant"),
        Prop("servesCuisine", "String", "str", "cuisine", "cuisine", phrases={"=~": ("that serve {v} food", "serving {v} cuisine", "with {v} food", "that offer {v} dishes")}),
        _GEO,
        _RATING,
        _REVIEWS,
        Prop("starRating.ratingValue", "Number", "num", "star rating", unit="stars"),
        Prop("priceRange", "Enum(cheap,moderate,expensive,luxury)", "enum", "price range", "", phrases={"==": ("that are {v}", "with a {v} price range", "in the {v} price range")}),
        Prop("acceptsReservations", "Boolean", "bool", "reservations", phrases={"true": ("that accept reservations", "that take reservations"), "false": ("that do not accept reservations", "that don't take reservations")}),
        Prop("smokingAllowed", "Boolean", "bool", "smoking", phrases={"true": ("that allow smoking", "where smoking is allowed"), "false": ("that do not allow smoking", "where smoking is not allowed")}),
        Prop("openingHours", "RecurrentTimeSpecification", "open", "opening hours"),
        Prop("address.postalCode", "String", "str", "zip code", "postal"),
        Prop("address.addressRegion", "Entity(tt:us_state)", "ent", "state", "state", phrases={"==": ("in the state of {v}", "located in {v}")}),
        Prop("author", "Entity(org.schema.Restaurant:Person)", "ent", "reviewer", "reviewer", phrases={"==": ("reviewed by {v}", "with a review by {v}")}),
        _TELEPHONE,
        Prop("priceRange", "String", "proj", "price range"),
        Prop("description", "String", "proj", "description"),
        Prop("image", "Entity(tt:picture)", "proj", "picture"),
        Prop("email", "Entity(tt:email_address)", "proj", "email address"),
    ),
)

REVIEW = Table(
    "@org.schema.Restaurant.Review", "review", "reviews",
    (
        Prop("author", "Entity(org.schema.Restaurant:Person)", "ent", "author", "reviewer", phrases={"==": ("written by {v}", "by {v}")}),
        Prop("reviewRating.ratingValue", "Number", "num", "rating", unit="stars", phrases={"==": ("with {v} stars", "rating it {v} stars"), ">=": ("with at least {v} stars",), "<=": ("with at most {v} stars",)}),
        _DATE,
        Prop("description", "String", "proj", "text"),
    ),
)

HOTEL = Table(
    "@org.schema.Hotel.Hotel", "hotel", "hotels",
    (
        Prop("id", "Entity(org.schema.Hotel:Hotel)", "id", "name", "hotel"),
        _GEO,
        Prop("amenityFeature", "Array(Entity(org.schema.Hotel:LocationFeatureSpecification))", "arr_ent", "amenities", "amenity", phrases={"contains": ("with {v}", "that offer {v}", "that have {v}", "with {v} available")}),
        _RATING,
        _REVIEWS,
        Prop("starRating.ratingValue", "Number", "num", "star rating", unit="stars", phrases={"==": ("with {v} stars", "with a {v} star rating")}),
        Prop("petsAllowed", "Boolean", "bool", "pets", phrases={"true": ("that allow pets", "where pets are allowed", "that accept pets"), "false": ("that do not allow pets", "where pets are not allowed")}),
        Prop("priceRange", "Enum(cheap,moderate,expensive,luxury)", "enum", "price range", phrases={"==": ("that are {v}", "with a {v} price range", "in the {v} price range")}),
        Prop("checkinTime", "Time", "time", "check-in time"),
        Prop("checkoutTime", "Time", "time", "check-out time"),
        Prop("address.postalCode", "String", "str", "zip code", "postal"),
        _TELEPHONE,
        Prop("faxNumber", "Entity(tt:phone_number)", "proj", "fax number"),
        Prop("email", "Entity(tt:email_address)", "proj", "email address"),
        Prop("description", "String", "proj", "description"),
    ),
)

PERSON = Table(
    "@org.schema.Person.Person", "person", "people",
    (
        Prop("id", "Entity(org.schema.Person:Person)", "id", "name", "person"),
        Prop("worksFor", "Array(Entity(org.schema.Person:Organization))", "arr_ent", "employers", "org", unit="employers", phrases={"contains": ("who work for {v}", "working at {v}", "employed by {v}", "who worked at {v}")}),
        Prop("alumniOf", "Array(Entity(org.schema.Person:Organization))", "arr_ent", "schools", "org", unit="schools", phrases={"contains": ("who studied at {v}", "who graduated from {v}", "who went to {v}", "alumni of {v}")}),
        Prop("award", "Array(String)", "arr_str", "awards", "award", unit="awards", phrases={"contains~": ("who won the {v}", "with a {v}", "who received the {v}")}),
        Prop("knowsLanguage", "Array(Entity(tt:iso_lang_code))", "arr_ent", "languages", "language", unit="languages", phrases={"contains": ("who speak {v}", "who know {v}", "speaking {v}")}),
        Prop("address.addressLocality", "String", "str", "city", "city", phrases={"=~": ("who live in {v}", "from {v}", "living in {v}")}),
        Prop("jobTitle", "String", "str", "job title", "job", phrases={"=~": ("who work as {v}", "whose job is {v}", "with the job title {v}")}),
        Prop("workLocation", "Location", "loc", "work location", "city", phrases={"==": ("who work in {v}", "working in {v}")}),
        Prop("email", "Entity(tt:email_address)", "proj", "email address"),
        Prop("telephone", "Entity(tt:phone_number)", "proj", "phone number"),
        Prop("faxNumber", "Entity(tt:phone_number)", "proj", "fax number"),
        Prop("image", "Entity(tt:picture)", "proj", "picture"),
        Prop("url", "Entity(tt:url)", "proj", "website"),
    ),
)

BOOK = Table(
    "@org.schema.Book.Book", "book", "books",
    (
        Prop("id", "Entity(org.schema.Book:Book)", "id", "title", "book"),
        Prop("author", "Entity(org.schema.Book:Person)", "ent", "author", "author", phrases={"==": ("by {v}", "written by {v}", "whose author is {v}", "authored by {v}")}),
        Prop("inLanguage", "Entity(tt:iso_lang_code)", "ent", "language", "language", phrases={"==": ("in {v}", "written in {v}", "published in {v}")}),
        Prop("award", "Array(String)", "arr_str", "awards", "award", unit="awards", phrases={"contains~": ("that won the {v}", "with a {v}", "awarded the {v}")}),
        Prop("bookEdition", "String", "str", "edition", "edition", phrases={"=~": ("in {v}", "with {v}", "that are {v}")}),
        Prop("bookFormat", "Enum(AudiobookFormat,EBook,GraphicNovel,Hardcover,Paperback)", "enum", "format", phrases={"==": ("in {v} format", "available as {v}", "that are {v}")}),
        Prop("abridged", "Boolean", "bool", "abridged", phrases={"true": ("that are abridged", "in an abridged version"), "false": ("that are not abridged", "that are not shortened")}),
        Prop("numberOfPages", "Number", "num", "number of pages", unit="pages"),
        _RATING,
        _REVIEWS,
        Prop("aggregateRating.ratingCount", "Number", "num", "number of ratings", unit="ratings"),
        _DATE,
        Prop("isbn", "String", "proj", "isbn"),
    ),
)

MOVIE = Table(
    "@org.schema.Movie.Movie", "movie", "movies",
    (
        Prop("id", "Entity(org.schema.Movie:Movie)", "id", "title", "movie"),
        Prop("actor", "Array(Entity(org.schema.Movie:Person))", "arr_ent", "actors", "actor", unit="actors", phrases={"contains": ("starring {v}", "with {v}", "that {v} acted in", "featuring {v}")}),
        Prop("director", "Array(Entity(org.schema.Movie:Person))", "arr_ent", "directors", "director", unit="directors", phrases={"contains": ("directed by {v}", "by director {v}", "that {v} directed")}),
        Prop("creator", "Array(Entity(org.schema.Movie:Person))", "arr_ent", "creators", "director", unit="creators", phrases={"contains": ("produced by {v}", "created by {v}")}),
        Prop("genre", "Array(String)", "arr_str", "genre", "genre", unit="genres", phrases={"contains~": ("in the {v} genre", "that are {v} movies", "of genre {v}")}),
        Prop("contentRating", "String", "str", "content rating", "content_rating", phrases={"=~": ("rated {v}", "with a {v} rating", "with content rating {v}")}),
        Prop("keywords", "String", "str", "keywords", "keyword", phrases={"=~": ("about {v}", "on the topic of {v}")}),
        Prop("duration", "Measure(ms)", "dur", "duration"),
        _RATING,
        Prop("aggregateRating.ratingCount", "Number", "num", "number of ratings", unit="ratings"),
        _DATE,
        Prop("review", "Array(Entity(org.schema.Movie:Review))", "proj", "reviews", unit="reviews"),
        Prop("url", "Entity(tt:url)", "proj", "website"),
    ),
    verb="released",
)

RECORDING = Table(
    "@org.schema.Music.MusicRecording", "song", "songs",
    (
        Prop("id", "Entity(org.schema.Music:MusicRecording)", "id", "title", "song"),
        Prop("byArtist", "Entity(org.schema.Music:Person)", "ent", "artist", "artist", phrases={"==": ("by {v}", "sung by {v}", "performed by {v}", "from {v}")}),
        Prop("inAlbum", "Entity(org.schema.Music:MusicAlbum)", "ent", "album", "album", phrases={"==": ("from the album {v}", "on {v}", "in the album {v}")}),
        Prop("genre", "Array(String)", "arr_str", "genre", "music_genre", unit="genres", phrases={"contains~": ("in the {v} genre", "that are {v} songs", "of genre {v}")}),
        Prop("inLanguage", "Entity(tt:iso_lang_code)", "ent", "language", "language", phrases={"==": ("in {v}", "sung in {v}")}),
        Prop("duration", "Measure(ms)", "dur", "length"),
        _DATE,
        Prop("url", "Entity(tt:url)", "proj", "link"),
    ),
    verb="released",
)

ALBUM = Table(
    "@org.schema.Music.MusicAlbum", "album", "albums",
    (
        Prop("id", "Entity(org.schema.Music:MusicAlbum)", "id", "title", "album"),
        Prop("byArtist", "Entity(org.schema.Music:Person)", "ent", "artist", "artist", phrases={"==": ("by {v}", "recorded by {v}", "from {v}")}),
        Prop("genre", "Array(String)", "arr_str", "genre", "music_genre", unit="genres", phrases={"contains~": ("in the {v} genre", "of genre {v}")}),
        Prop("inLanguage", "Entity(tt:iso_lang_code)", "ent", "language", "language", phrases={"==": ("in {v}", "sung in {v}")}),
        Prop("numTracks", "Number", "num", "number of tracks", unit="tracks"),
        _DATE,
    ),
    verb="released",
)

#: domain -> its tables (the first is the main one)
DOMAINS: dict[str, tuple[Table, ...]] = {
    "restaurants": (RESTAURANT, REVIEW),
    "people": (PERSON,),
    "hotels": (HOTEL,),
    "books": (BOOK,),
    "movies": (MOVIE,),
    "music": (RECORDING, ALBUM),
}
